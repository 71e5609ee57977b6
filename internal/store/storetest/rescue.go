package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

// Runners and rescue: a dead runner's rows in flight become unknown, never
// pending, so nobody is messaged twice.

func (s suite) rescueTests() []sub {
	return []sub{
		{"recover orphans", s.testRecoverOrphans},
		{"rescue while running", s.testRescue},
		{"holders of rows in flight", s.testHolders},
		{"a rescue races late answers", s.testRescueRacesLateAnswers},
	}
}

func (s suite) testRecoverOrphans(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "orphans", 4)
	for _, id := range []string{"dead", "live"} {
		if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: id, CampaignID: c.ID, Host: "h", PID: 1, StartedAt: t0, HeartbeatAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	byDead := mustClaim(t, st, c.ID, "dead", t0)
	byLive := mustClaim(t, st, c.ID, "live", t0)
	byGhost := mustClaim(t, st, c.ID, "ghost", t0) // never registered
	other := MustCampaign(t, st, "other", 2)
	byGhost2 := mustClaim(t, st, other.ID, "ghost", t0)
	// Their requests started: each may have reached the API.
	mustStart(t, st, "dead", t0, byDead)
	mustStart(t, st, "live", t0, byLive)
	mustStart(t, st, "ghost", t0, byGhost, byGhost2)
	// The live runner beats (every 20 s here), keeping its lease.
	for d := 20 * time.Second; d <= 2*time.Minute; d += 20 * time.Second {
		if err := st.Heartbeat(t.Context(), "live", at(d)); err != nil {
			t.Fatal(err)
		}
	}

	clk.Set(at(2 * time.Minute))
	stale := func(r campaign.Runner) bool { return clk.Now().Sub(r.HeartbeatAt) > 90*time.Second }
	moved, err := st.RecoverOrphans(t.Context(), clk.Now(), stale)
	if err != nil {
		t.Fatal(err)
	}
	// Each campaign's rows are counted as its own.
	if len(moved) != 2 || moved[c.ID] != 2 || moved[other.ID] != 1 {
		t.Errorf("moved %v rows by campaign, want %d: 2 (dead's and ghost's), %d: 1 (ghost's)", moved, c.ID, other.ID)
	}
	for _, tt := range []struct {
		claim campaign.Claim
		want  string
	}{{byDead, "unknown"}, {byLive, "sending"}, {byGhost, "unknown"}} {
		if got := readMessage(t, st, tt.claim.Message.ID).state; got != tt.want {
			t.Errorf("row claimed by %s: %s, want %s", tt.claim.Message.Phone, got, tt.want)
		}
	}
	if n := CountRows(t, st, `SELECT count(*) FROM runners WHERE id = 'dead'`); n != 0 {
		t.Errorf("dead runner still registered")
	}
	if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE outcome = 'unknown' AND done_at = ?`, clk.Now().UnixNano()); n != 3 {
		t.Errorf("%d attempts closed as unknown, want 3", n)
	}

	// The dead runner's late answers: a failure or retry no longer applies
	// (the row is not resent blindly), but a wamid is the truth and is kept.
	// Each is refused by its fence, and said to be.
	if err := record(t, st, byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0}, clk.Now()); !errors.Is(err, campaign.ErrFenced) {
		t.Fatalf("a late retry: %v, want ErrFenced", err)
	}
	if err := record(t, st, byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 1}, clk.Now()); !errors.Is(err, campaign.ErrFenced) {
		t.Fatalf("a late failure: %v, want ErrFenced", err)
	}
	if got := readMessage(t, st, byDead.Message.ID); got.state != "unknown" {
		t.Errorf("a late failure changed an unknown row to %s", got.state)
	}
	if err := record(t, st, byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.late"}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got := readMessage(t, st, byDead.Message.ID); got.state != "sent" || got.wamid.String != "wamid.late" {
		t.Errorf("late sent: %+v, want sent with wamid.late", got)
	}

	// Another recovery leaves the live runner alone.
	if moved, err := st.RecoverOrphans(t.Context(), clk.Now(), stale); err != nil || len(moved) != 0 {
		t.Errorf("second recovery moved %v, %v", moved, err)
	}
	n, err := st.RequeueUnknown(t.Context(), c.ID)
	if err != nil || n != 1 {
		t.Errorf("requeue unknown: %d, %v; want the ghost's row", n, err)
	}
	if got := readMessage(t, st, byGhost.Message.ID); got.state != "pending" {
		t.Errorf("requeued row is %s", got.state)
	}
}

// testRescue: a running engine's rescue turns only its campaign's rows of
// dead runners unknown, unregisters every dead runner, and a runner taken
// for dead learns so from its next heartbeat.
func (s suite) testRescue(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c1 := MustCampaign(t, st, "one", 3)
	c2 := MustCampaign(t, st, "two", 3)
	for _, r := range []campaign.Runner{{ID: "dead1", CampaignID: c1.ID}, {ID: "dead2", CampaignID: c2.ID}, {ID: "live", CampaignID: c1.ID}} {
		r.Host, r.PID, r.StartedAt, r.HeartbeatAt = "h", 1, t0, t0
		if err := st.RegisterRunner(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	dead1 := mustClaim(t, st, c1.ID, "dead1", t0)
	dead2 := mustClaim(t, st, c2.ID, "dead2", t0)
	live := mustClaim(t, st, c1.ID, "live", t0)
	mustStart(t, st, "dead1", t0, dead1)
	mustStart(t, st, "dead2", t0, dead2)
	mustStart(t, st, "live", t0, live)
	for d := 20 * time.Second; d <= time.Minute; d += 20 * time.Second {
		if err := st.Heartbeat(t.Context(), "live", at(d)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Set(at(time.Minute))
	stale := func(r campaign.Runner) bool { return clk.Now().Sub(r.HeartbeatAt) > 30*time.Second }
	moved, err := st.Rescue(t.Context(), c1.ID, clk.Now(), stale)
	if err != nil || moved != 1 {
		t.Fatalf("rescue moved %d, %v; want dead1's one row", moved, err)
	}
	for _, tt := range []struct {
		claim campaign.Claim
		want  string
	}{{dead1, "unknown"}, {dead2, "sending"}, {live, "sending"}} {
		if got := readMessage(t, st, tt.claim.Message.ID).state; got != tt.want {
			t.Errorf("campaign %d row claimed by %s: %s, want %s", tt.claim.Message.CampaignID, tt.claim.Message.Phone, got, tt.want)
		}
	}
	if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE message_id = ? AND outcome = 'unknown' AND done_at = ?`,
		dead1.Message.ID, clk.Now().UnixNano()); n != 1 {
		t.Errorf("dead1's attempt not closed as unknown")
	}
	if n := CountRows(t, st, `SELECT count(*) FROM runners`); n != 1 {
		t.Errorf("%d runners registered, want only the live one", n)
	}
	// campaign 2's row: its runner is gone now, so its own rescue moves it.
	if moved, err := st.Rescue(t.Context(), c2.ID, clk.Now(), stale); err != nil || moved != 1 {
		t.Errorf("rescue of campaign 2 moved %d, %v; want 1", moved, err)
	}
	if err := st.Heartbeat(t.Context(), "dead1", clk.Now()); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("heartbeat of an unregistered runner: %v, want ErrNotFound", err)
	}
	if _, err := st.Rescue(t.Context(), 0, clk.Now(), stale); err == nil {
		t.Error("rescue of campaign 0: no error")
	}
}

// testHolders: the runners other than self with rows of the campaign in
// flight, with their heartbeat; one no longer registered comes with its id
// alone; a heartbeat moves only its own runner's.
func (s suite) testHolders(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "held", 4)
	registerRunner(t, st, "me", c.ID, t0)
	registerRunner(t, st, "other", c.ID, t0)
	registerRunner(t, st, "idle", c.ID, t0) // holds nothing
	mustClaim(t, st, c.ID, "me", t0)
	mustClaim(t, st, c.ID, "other", t0)
	mustClaim(t, st, c.ID, "gone", t0) // never registered
	if err := st.Heartbeat(t.Context(), "other", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	hs, err := readmodel.New(st).Holders(t.Context(), c.ID, "me")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Time{}
	for _, h := range hs {
		got[h.ID] = h.HeartbeatAt
	}
	if len(got) != 2 || !got["other"].Equal(at(time.Minute)) || !got["gone"].IsZero() {
		t.Errorf("holders %+v; want other (beat at +1m) and gone (no heartbeat)", hs)
	}
	if err := st.UnregisterRunner(t.Context(), "other"); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(t.Context(), "other", at(2*time.Minute)); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("heartbeat after unregistering: %v, want ErrNotFound", err)
	}
}
