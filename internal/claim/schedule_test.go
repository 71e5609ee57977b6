package claim

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

func TestClaimWaitsForScheduledStart(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := scheduledCampaign(t, st, "later", 3, campaign.Schedule{StartAt: at(2 * time.Hour)})
	if !c.Scheduled(t0) || c.Scheduled(at(2*time.Hour)) {
		t.Errorf("Scheduled(t0) = %v, Scheduled(start) = %v; want true, false", c.Scheduled(t0), c.Scheduled(at(2*time.Hour)))
	}
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantWait: campaign.WaitScheduled, WantUntil: 2 * time.Hour},
		{At: 2*time.Hour - time.Nanosecond, WantWait: campaign.WaitScheduled, WantUntil: 2 * time.Hour},
	})
	if n := countRows(t, st, `SELECT count(*) FROM attempts`); n != 0 {
		t.Fatalf("%d attempts before the start", n)
	}
	if a := accountByName(t, st, "a"); a.UsedToday != 0 {
		t.Fatalf("used %d of the cap before the start", a.UsedToday)
	}
	runClaims(t, st, clk, c.ID, []claimStep{{At: 2 * time.Hour, WantAccount: "a"}})
	c, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !c.BeganAt.Equal(at(2 * time.Hour)) {
		t.Errorf("began at %v, want the start", c.BeganAt)
	}
}

func TestExpireAfter(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(1, 2, 100))
	c := scheduledCampaign(t, st, "flash", 6, campaign.Schedule{ExpireAfter: time.Hour})

	// The first claim starts the campaign: a retry past the validity waits
	// only until the validity ends.
	first := mustClaim(t, st, c.ID, "r1", t0)
	if err := record(t.Context(), st, first, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry,
		RetryAt: at(3 * time.Hour), ErrorCode: 131000, Error: "try again"}, t0); err != nil {
		t.Fatal(err)
	}
	sent := mustClaim(t, st, c.ID, "r1", at(time.Second))
	if err := record(t.Context(), st, sent, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	inFlight := mustClaim(t, st, c.ID, "r1", at(time.Hour-time.Second))
	back := mustClaim(t, st, c.ID, "r1", at(time.Hour-time.Second))
	// Four rows remain pending (one waits for its retry), two in flight.
	checkCounts(t, st, "before the deadline", c.ID)

	// At the deadline every pending row expires, the rows in flight stay.
	_, err := claimOne(t.Context(), st, c.ID, "r1", at(time.Hour))
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitInFlight {
		t.Fatalf("claim at the deadline = %v, want a wait for rows in flight", err)
	}
	n, err := st.Counts(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (campaign.Counts{campaign.Expired: 3, campaign.Sent: 1, campaign.Sending: 2}); !maps.Equal(n, want) {
		t.Fatalf("counts %v, want %v", n, want)
	}
	var state, why string
	if err := st.Reader().QueryRow(`SELECT state, error_message FROM messages WHERE id = ?`, first.Message.ID).Scan(&state, &why); err != nil ||
		state != "expired" || !strings.Contains(why, "expired: not sent within 1h0m0s") {
		t.Errorf("the retrying row: %s %q, %v", state, why, err)
	}
	checkCounts(t, st, "the deadline", c.ID)

	// A request in flight keeps its answer; a row thrown back expires.
	if err := record(t.Context(), st, inFlight, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w2"}, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := record(t.Context(), st, back, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(time.Hour)}, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := claimOne(t.Context(), st, c.ID, "r1", at(time.Hour+time.Second)); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("claim after the deadline = %v, want done", err)
	}
	n, _ = st.Counts(t.Context(), c.ID)
	if want := (campaign.Counts{campaign.Expired: 4, campaign.Sent: 2}); !maps.Equal(n, want) {
		t.Fatalf("counts %v, want %v", n, want)
	}
	checkCounts(t, st, "the end", c.ID)
}

func TestRetryWaitEndsAtTheDeadline(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := scheduledCampaign(t, st, "one", 1, campaign.Schedule{ExpireAfter: time.Hour})
	cl := mustClaim(t, st, c.ID, "r1", t0)
	if err := record(t.Context(), st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(3 * time.Hour)}, t0); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{{At: time.Minute, WantWait: campaign.WaitRetry, WantUntil: time.Hour}})
	if _, err := claimOne(t.Context(), st, c.ID, "r1", at(time.Hour)); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("claim at the deadline = %v, want done", err)
	}
	if got, _ := st.Campaign(t.Context(), c.ID); got.State != campaign.CampaignFinished {
		t.Errorf("state %s, want finished", got.State)
	}
}

// A new start forgets the old one: the validity counts from it.
func TestRescheduleRestartsTheValidity(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := scheduledCampaign(t, st, "again", 3, campaign.Schedule{ExpireAfter: time.Hour})
	mustClaim(t, st, c.ID, "r1", t0)
	if err := st.SetSchedule(t.Context(), c.ID, campaign.Schedule{StartAt: at(5 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 2 * time.Hour, WantWait: campaign.WaitScheduled, WantUntil: 5 * time.Hour},
		{At: 5*time.Hour + 30*time.Minute, WantAccount: "a"},
	})
	if n, _ := st.Counts(t.Context(), c.ID); n[campaign.Expired] != 0 {
		t.Errorf("%d expired, want none: the validity counts from the new start", n[campaign.Expired])
	}
}

// The validity's deadline is fixed once: --at plus --expire-after, or the
// first claim plus it without a --at. The same schedule set again (a
// re-run of the same command) moves nothing; a new --at or a new validity
// computes it again from the start as it stands.
func TestDeadlineIsFixedOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sched   campaign.Schedule
		firstAt time.Duration       // the first claim
		again   []campaign.Schedule // set after the first claim, as a re-run does
		want    time.Duration       // the deadline, from t0
	}{
		{name: "from --at, not the first claim", sched: campaign.Schedule{StartAt: at(time.Hour), ExpireAfter: time.Hour},
			firstAt: 90 * time.Minute, want: 2 * time.Hour},
		{name: "the same command again", sched: campaign.Schedule{StartAt: at(time.Hour), ExpireAfter: time.Hour},
			firstAt: 90 * time.Minute, again: []campaign.Schedule{{StartAt: at(time.Hour), ExpireAfter: time.Hour}, {StartAt: at(time.Hour)}},
			want: 2 * time.Hour},
		{name: "the same relative --at again", sched: campaign.Schedule{StartAt: at(time.Hour), StartArg: "+1h", ExpireAfter: time.Hour},
			firstAt: 90 * time.Minute, again: []campaign.Schedule{{StartAt: at(150 * time.Minute), StartArg: "+1h", ExpireAfter: time.Hour}},
			want: 2 * time.Hour},
		{name: "no --at: the first claim", sched: campaign.Schedule{ExpireAfter: time.Hour},
			firstAt: 30 * time.Minute, again: []campaign.Schedule{{ExpireAfter: time.Hour}}, want: 90 * time.Minute},
		{name: "a new validity counts from --at", sched: campaign.Schedule{StartAt: at(time.Hour), ExpireAfter: time.Hour},
			firstAt: 90 * time.Minute, again: []campaign.Schedule{{ExpireAfter: 3 * time.Hour}}, want: 4 * time.Hour},
		{name: "a new validity counts from the first claim", sched: campaign.Schedule{ExpireAfter: time.Hour},
			firstAt: 30 * time.Minute, again: []campaign.Schedule{{ExpireAfter: 2 * time.Hour}}, want: 150 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			c := scheduledCampaign(t, st, "flash", 5, tt.sched)
			if !tt.sched.StartAt.IsZero() && !c.ExpiresAt().Equal(tt.sched.StartAt.Add(tt.sched.ExpireAfter)) {
				t.Errorf("after import: expires %v, want --at + --expire-after", c.ExpiresAt())
			}
			clk.Set(at(tt.firstAt))
			mustClaim(t, st, c.ID, "r1", at(tt.firstAt))
			for _, sc := range tt.again {
				if err := st.SetSchedule(t.Context(), c.ID, sc); err != nil {
					t.Fatal(err)
				}
			}
			c, err := st.Campaign(t.Context(), c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !c.ExpiresAt().Equal(at(tt.want)) {
				t.Fatalf("expires at +%v, want +%v", c.ExpiresAt().Sub(t0), tt.want)
			}
			// A claim before the deadline sends; at it, the rest expire.
			clk.Set(at(tt.want - time.Nanosecond))
			mustClaim(t, st, c.ID, "r1", at(tt.want-time.Nanosecond))
			clk.Set(at(tt.want))
			if _, err := claimOne(t.Context(), st, c.ID, "r1", at(tt.want)); err == nil {
				t.Fatalf("a claim at the deadline succeeded")
			}
			if n, _ := st.Counts(t.Context(), c.ID); n[campaign.Expired] != 3 {
				t.Errorf("counts %v, want 3 expired", n)
			}
		})
	}
}
