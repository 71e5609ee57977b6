package claim

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestPairGap: a second message to one person, from any of our numbers,
// waits until the gap has passed since the first.
func TestPairGap(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	first := mustCampaign(t, st, "first", 1)
	second := mustCampaign(t, st, "second", 1) // the same person
	if err := st.SetPairGap(t.Context(), second.ID, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, first.ID, "r1", t0)
	_, err := claimOne(t.Context(), st, second.ID, "r1", at(2*time.Second))
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitRetry || !we.Until.Equal(at(6*time.Second)) {
		t.Fatalf("claim 2 s after the first message: %v, want a wait until +6s", err)
	}
	// The row itself waits: the next claim does not look at it before.
	if next := countRows(t, st, `SELECT next_attempt_at FROM messages WHERE id = 2`); int64(next) != at(6*time.Second).UnixNano() {
		t.Errorf("row waits until %v, want +6s", time.Unix(0, int64(next)).Sub(t0))
	}
	if c := mustClaim(t, st, second.ID, "r1", at(6*time.Second)); c.Message.Phone != phone(0) {
		t.Errorf("claimed %s", c.Message.Phone)
	}
	if err := st.SetPairGap(t.Context(), second.ID, -time.Second); err == nil {
		t.Error("a negative pair gap was accepted")
	}
}

// TestStickySender: a recipient keeps the number that messaged them within
// 30 days; when that number is disabled, restricted, dropped or removed,
// another sends and the break is counted with its reason.
func TestStickySender(t *testing.T) {
	h := time.Hour
	tests := []struct {
		name        string
		change      func(t *testing.T, st *store.Store, campaignID int64)
		after       time.Duration
		wantAccount string
		wantBreak   string
	}{
		{name: "kept: b has more tokens, a sends", after: h, wantAccount: "a"},
		{name: "after 30 days no number is owed", after: 31 * 24 * h, wantAccount: "b",
			change: func(t *testing.T, st *store.Store, _ int64) {
				if _, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "disabled", after: h, wantAccount: "b", wantBreak: campaign.StickyDisabled,
			change: func(t *testing.T, st *store.Store, _ int64) {
				if _, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "dropped", after: h, wantAccount: "b", wantBreak: campaign.StickyDropped,
			change: func(t *testing.T, st *store.Store, id int64) {
				if err := st.DropAccount(t.Context(), id, 1, "190 token expired", 190, t0); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "removed", after: h, wantAccount: "b", wantBreak: campaign.StickyRemoved,
			change: func(t *testing.T, st *store.Store, _ int64) {
				if err := st.RemoveAccount(t.Context(), "a"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "restricted", after: h, wantAccount: "b", wantBreak: campaign.StickyRestricted,
			change: func(t *testing.T, st *store.Store, _ int64) {
				if err := storetest.Exec(t.Context(), st.Path(), `UPDATE accounts SET restriction = 'spam limit (131048)', cooldown_until = ? WHERE name = 'a'`,
					at(10*h).UnixNano()); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierNew, limited(1, 1, 1000))
			first := mustCampaign(t, st, "first", 1)
			c := mustClaim(t, st, first.ID, "r1", t0)
			if c.Account.Name != "a" {
				t.Fatalf("first message from %s", c.Account.Name)
			}
			mustSent(t, st, c)
			mustAccount(t, st, "b", campaign.TierNew, limited(1, 5, 1000)) // fuller: Pick's choice
			second := mustCampaign(t, st, "second", 1)
			if tt.change != nil {
				tt.change(t, st, second.ID)
			}
			clk.Set(at(tt.after))
			c = mustClaim(t, st, second.ID, "r1", at(tt.after))
			if c.Account.Name != tt.wantAccount {
				t.Errorf("sent from %s, want %s", c.Account.Name, tt.wantAccount)
			}
			breaks, err := readmodel.New(st).StickyBreaks(t.Context(), second.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			if tt.wantBreak != "" {
				want[tt.wantBreak] = 1
			}
			if len(breaks) != len(want) || breaks[tt.wantBreak] != want[tt.wantBreak] {
				t.Errorf("breaks %v, want %v", breaks, want)
			}
		})
	}
}

// TestStickyWaitsForItsNumber: a recipient whose number has no token waits
// for it while other recipients go through other numbers.
func TestStickyWaitsForItsNumber(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(0.1, 1, 1000))
	first := mustCampaign(t, st, "first", 1)
	mustSent(t, st, mustClaim(t, st, first.ID, "r1", t0)) // a's only token
	mustAccount(t, st, "b", campaign.TierNew, limited(1, 5, 1000))
	second := mustCampaign(t, st, "second", 3) // phone(0) is a's
	cs, err := New(st).ClaimN(t.Context(), second.ID, "r1", at(time.Second), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("claimed %d, want the two new recipients", len(cs))
	}
	for _, c := range cs {
		if c.Message.Phone == phone(0) || c.Account.Name != "b" {
			t.Errorf("claimed %s on %s", c.Message.Phone, c.Account.Name)
		}
	}
	c := mustClaim(t, st, second.ID, "r1", at(10*time.Second))
	if c.Message.Phone != phone(0) || c.Account.Name != "a" {
		t.Errorf("at a's next token: %s on %s, want %s on a", c.Message.Phone, c.Account.Name, phone(0))
	}
}

func mustSent(t *testing.T, st *store.Store, c campaign.Claim) {
	t.Helper()
	if err := record(t.Context(), st, c, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}, c.At); err != nil {
		t.Fatal(err)
	}
}

// TestStickyFollowsAcceptedSends: a request the API did not accept (still
// in flight, or refused) binds the recipient to no number.
func TestStickyFollowsAcceptedSends(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(1, 1, 1000))
	first := mustCampaign(t, st, "first", 1)
	mustClaim(t, st, first.ID, "r1", t0) // in flight
	mustAccount(t, st, "b", campaign.TierNew, limited(1, 5, 1000))
	// a's bucket is no fuller than b's: only stickiness could choose a.
	if err := storetest.Exec(t.Context(), st.Path(), `UPDATE accounts SET tokens = 0, tokens_at = ? WHERE name = 'a'`, at(time.Hour).UnixNano()); err != nil {
		t.Fatal(err)
	}
	second := mustCampaign(t, st, "second", 1)
	if c := mustClaim(t, st, second.ID, "r1", at(time.Hour)); c.Account.Name != "b" {
		t.Errorf("sent from %s, want b: a's message was never accepted", c.Account.Name)
	}
}

// TestPairGapWaitEndsAtTheDeadline: a row the pair gap puts off past the
// campaign's validity waits only until the deadline, where it expires.
func TestPairGapWaitEndsAtTheDeadline(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	first := mustCampaign(t, st, "first", 1)
	second := scheduledCampaign(t, st, "second", 1, campaign.Schedule{ExpireAfter: 5 * time.Minute}) // the same person
	if err := st.SetPairGap(t.Context(), second.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, first.ID, "r1", t0)
	// Its first claim begins the validity: the deadline is 5 min later.
	deadline := at(time.Second + 5*time.Minute)
	_, err := claimOne(t.Context(), st, second.ID, "r1", at(time.Second))
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitRetry || !we.Until.Equal(deadline) {
		t.Fatalf("claim within the pair gap: %v, want a wait until the deadline %v", err, deadline)
	}
	if _, err := claimOne(t.Context(), st, second.ID, "r1", deadline); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("claim at the deadline = %v, want done", err)
	}
	if n, err := st.Counts(t.Context(), second.ID); err != nil || n[campaign.Expired] != 1 {
		t.Errorf("counts %v (%v), want the row expired", n, err)
	}
}
