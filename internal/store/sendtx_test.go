package store

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// writerTempStore is the writer connection's temp_store: 0 SQLite's
// default (files), 2 memory.
func writerTempStore(t *testing.T, st *Store) int {
	t.Helper()
	st.wmu.Lock()
	defer st.wmu.Unlock()
	w, err := st.writer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := w.QueryRowContext(t.Context(), `PRAGMA temp_store`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// Claims, outcomes and the applier's transactions keep their statement
// journals in memory; every other write runs with SQLite's default, files
// past 64 KiB.
func TestSendingTransactionsJournalInMemory(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "c", 4)
	steps := []struct {
		name  string
		write func() error
		want  int
	}{
		{"claim", func() error { _, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 2); return err }, 2},
		{"pair gap", func() error { return st.SetPairGap(t.Context(), c.ID, 0) }, 0},
		{"record and claim", func() error {
			cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 1)
			if err != nil {
				return err
			}
			_, claimErr, err := st.RecordAndClaimN(t.Context(), "r1",
				[]campaign.Result{{Claim: cs[0], At: t0, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}}}, c.ID, t0, 1, 0)
			return errors.Join(claimErr, err)
		}, 2},
		{"applier", func() error {
			return st.WithInbox(t.Context(), func(tx driver.InboxTx, _ time.Time) error { _, err := tx.Bodies(t.Context(), 1); return err })
		}, 2},
		{"heartbeat", func() error {
			return st.RegisterRunner(t.Context(), campaign.Runner{ID: "r1", CampaignID: c.ID, StartedAt: t0, HeartbeatAt: t0})
		}, 0},
	}
	for _, s := range steps {
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := writerTempStore(t, st); got != s.want {
			t.Errorf("after %s: temp_store %d, want %d", s.name, got, s.want)
		}
	}
}

// Expiring a campaign's rows may touch all of them: the claim that does it
// runs as an ordinary write, and the outcomes recorded with it are kept.
func TestRecordAndClaimExpiresAsAnOrdinaryWrite(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := scheduledCampaign(t, st, "flash", 5, campaign.Schedule{ExpireAfter: time.Hour})
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 2)
	if err != nil || len(cs) != 2 {
		t.Fatalf("claim: %d rows, %v", len(cs), err)
	}
	rs := make([]campaign.Result, len(cs))
	for i, cl := range cs {
		rs[i] = campaign.Result{Claim: cl, At: at(time.Hour), Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w" + cl.Message.Phone}}
	}
	more, claimErr, err := st.RecordAndClaimN(t.Context(), "r1", rs, c.ID, at(time.Hour), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(more) != 0 || !errors.Is(claimErr, campaign.ErrDone) {
		t.Fatalf("claimed %d rows, %v; want none, done", len(more), claimErr)
	}
	n, err := st.Counts(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (campaign.Counts{campaign.Sent: 2, campaign.Expired: 3}); !maps.Equal(n, want) {
		t.Fatalf("counts %v, want %v", n, want)
	}
	checkCounts(t, st, "expired", c.ID)
	if got := writerTempStore(t, st); got != 0 {
		t.Errorf("temp_store %d after the expiring claim, want 0 (an ordinary write)", got)
	}
}

// A long block of numbers suppressed after the import fails in one claim;
// past maxDroppedInMemory rows that claim runs as an ordinary write, and
// still ends with the first rows it can send.
func TestClaimPastManySuppressedRunsAsAnOrdinaryWrite(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	const blocked = maxDroppedInMemory + 100
	c := mustCampaign(t, st, "c", blocked+3)
	var list []campaign.Suppression
	for i := range blocked {
		list = append(list, campaign.Suppression{Phone: phone(i)})
	}
	if _, err := st.Suppress(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Message.Phone != phone(blocked) || cs[1].Message.Phone != phone(blocked+1) {
		t.Fatalf("claimed %v, want the two rows after the suppressed block", cs)
	}
	n, err := st.Counts(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (campaign.Counts{campaign.Failed: blocked, campaign.Sending: 2, campaign.Pending: 1}); !maps.Equal(n, want) {
		t.Fatalf("counts %v, want %v", n, want)
	}
	checkCounts(t, st, "suppressed block", c.ID)
	if got := writerTempStore(t, st); got != 0 {
		t.Errorf("temp_store %d after the claim, want 0 (an ordinary write)", got)
	}
	// The next claims are sending transactions again.
	if _, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 1); err != nil {
		t.Fatal(err)
	}
	if got := writerTempStore(t, st); got != 2 {
		t.Errorf("temp_store %d after the next claim, want 2 (memory)", got)
	}
}
