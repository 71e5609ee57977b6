package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// testRescueRacesLateAnswers: one handle rescues a runner taken for dead
// while another records that runner's late answers, at once, over and over.
// Whatever the order: a row answered sent is sent (the wamid is the truth),
// a row answered with a retry is pending (the answer came first) or unknown
// (the rescue did), none is left sending, and the counts agree with the
// rows.
func (s suite) testRescueRacesLateAnswers(t *testing.T) {
	const rounds, rows = 4, 12
	clk := newFakeClock()
	db := s.h.NewDB(t)
	rescuer, recorder := s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)
	MustAccount(t, rescuer, "a", campaign.TierNew, Limited(1000, rows, rounds*rows))
	for round := range rounds {
		clk.Advance(time.Second) // the bucket refills
		c := MustCampaign(t, rescuer, fmt.Sprint("race", round), rows)
		runner := fmt.Sprint("late", round)
		registerRunner(t, recorder, runner, c.ID, clk.Now())
		cs, err := ledger(recorder).ClaimN(t.Context(), c.ID, runner, clk.Now(), rows)
		if err != nil || len(cs) != rows {
			t.Fatalf("round %d: claimed %d rows, %v", round, len(cs), err)
		}
		mustStart(t, recorder, runner, clk.Now(), cs...) // answered: every request was made
		rs := make([]campaign.Result, len(cs))
		for i, cl := range cs {
			o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}
			if i%2 == 1 {
				o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: clk.Now().Add(time.Minute), ErrorCode: 131000}
			}
			rs[i] = campaign.Result{Claim: cl, Outcome: o, At: clk.Now()}
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			dead := func(r campaign.Runner) bool { return r.ID == runner }
			if _, err := rescuer.Rescue(t.Context(), c.ID, clk.Now(), dead); err != nil {
				t.Errorf("round %d: rescue: %v", round, err)
			}
		})
		wg.Go(func() {
			// In two groups, so a rescue may fall between them.
			for _, part := range [][]campaign.Result{rs[:rows/2], rs[rows/2:]} {
				// A retry after the rescue is refused by its fence.
				if err := recorder.RecordAll(t.Context(), runner, part); err != nil && !errors.Is(err, campaign.ErrFenced) {
					t.Errorf("round %d: record: %v", round, err)
				}
			}
		})
		wg.Wait()
		for i, r := range rs {
			got := readMessage(t, rescuer, r.Claim.Message.ID).state
			if want := "sent"; i%2 == 0 && got != want {
				t.Errorf("round %d: row answered sent is %s", round, got)
			}
			if i%2 == 1 && got != "pending" && got != "unknown" {
				t.Errorf("round %d: row answered with a retry is %s, want pending or unknown", round, got)
			}
		}
		counts, err := rescuer.Counts(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []campaign.State{campaign.Pending, campaign.Sending, campaign.Sent, campaign.Unknown} {
			if n := CountRows(t, rescuer, `SELECT count(*) FROM messages WHERE campaign_id = ? AND state = ?`, c.ID, string(st)); n != counts[st] {
				t.Errorf("round %d: %d rows %s, counted %d", round, n, st, counts[st])
			}
		}
		if counts[campaign.Sending] != 0 {
			t.Errorf("round %d: %d rows left sending", round, counts[campaign.Sending])
		}
	}
}
