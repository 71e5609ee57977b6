package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store/driver"
)

// testClaimContention: three handles on one database — three processes —
// each with several goroutines recording and claiming batches of one
// campaign (RecordAndClaimN, the engine's hot path) until it is done: every
// row is claimed once, sent once, and the counts say so.
func (s suite) testClaimContention(t *testing.T) {
	const (
		handles, workers = 3, 6
		messages, batch  = 400, 7
	)
	clk := newFakeClock()
	stores := s.handles(t, handles, clk)
	for _, name := range []string{"a", "b", "c"} {
		MustAccount(t, stores[0], name, campaign.TierNew, Limited(100, messages, messages))
	}
	c := MustCampaign(t, stores[1], "contended", messages)

	var (
		claimed claimRegister
		wg      sync.WaitGroup
	)
	for h := range handles {
		for w := range workers {
			st, runner := stores[h], fmt.Sprintf("h%d-w%d", h, w)
			registerRunner(t, st, runner, c.ID, t0)
			wg.Go(func() {
				claimUntilEnd(t, st, clk, runner, c.ID, batch, 10*messages, func(cs ...campaign.Claim) { claimed.add(runner, cs...) },
					func(cl campaign.Claim) campaign.Outcome {
						return campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}
					})
			})
		}
	}
	wg.Wait()

	st := stores[2]
	claimed.check(t, st, messages)
	counts, err := st.Counts(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != messages || len(counts) != 1 {
		t.Errorf("counts %v, want %d sent and nothing else", counts, messages)
	}
	used := 0
	for _, name := range []string{"a", "b", "c"} {
		used += AccountByName(t, st, name).UsedToday
	}
	if used != messages {
		t.Errorf("%d sends counted on the accounts, want %d", used, messages)
	}
}

// testOutcomesBesideClaims: three handles record outcomes and claim two
// campaigns to the same numbers at once until the numbers' daily caps
// stop them, two runners of each handle meeting failures (recorded one by
// one), the others none (in bulk). However they interleave, no cap is
// exceeded, the kept counts equal a recount (at the end of every case),
// and no transaction ran again after a deadlock (Harness.Retried): on
// Postgres, writers that lock the rows they share (the kept counts, the
// send log) in different orders deadlock, and each costs a second.
func (s suite) testOutcomesBesideClaims(t *testing.T) {
	const (
		handles, workers = 3, 6
		messages, batch  = 600, 12
		dailyCap         = 300
	)
	clk := newFakeClock()
	stores := s.handles(t, handles, clk)
	names := []string{"a", "b", "c"}
	for _, name := range names {
		MustAccount(t, stores[0], name, campaign.TierNew, Limited(1000, 2*messages, dailyCap))
	}
	camps := []campaign.Campaign{
		MustCampaign(t, stores[0], "first", messages),
		MustCampaign(t, stores[1], "second", messages), // the same numbers
	}

	var wg sync.WaitGroup
	for h, st := range stores {
		for w := range workers {
			c, runner, fails := camps[w%2], fmt.Sprintf("h%d-w%d", h, w), w < 2
			registerRunner(t, st, runner, c.ID, t0)
			wg.Go(func() {
				claimUntilEnd(t, st, clk, runner, c.ID, batch, 10*messages, nil, func(cl campaign.Claim) campaign.Outcome {
					if fails && cl.Message.ID%4 == 0 {
						return campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Class: "permanent"}
					}
					return campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID), Class: "ok"}
				})
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	st := stores[0]
	if s.h.Retried != nil {
		for i, h := range stores {
			if n := s.h.Retried(h); n != 0 {
				t.Errorf("handle %d ran %d transactions again after a deadlock", i, n)
			}
		}
	}
	attempts := 0
	for _, name := range names {
		a := AccountByName(t, st, name)
		n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE account_id = ?`, a.ID)
		if n > dailyCap || a.UsedToday > dailyCap {
			t.Errorf("number %s: %d requests, %d counted, over its cap of %d", name, n, a.UsedToday, dailyCap)
		}
		attempts += n
	}
	if attempts != len(names)*dailyCap {
		t.Errorf("%d requests, want the numbers' caps, %d", attempts, len(names)*dailyCap)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sending'`); n != 0 {
		t.Errorf("%d rows left in flight", n)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sent'`); n == 0 {
		t.Error("no row sent")
	}
}

// claimUntilEnd has runner record its last batch and claim the next
// (RecordAndClaimN, the engine's hot path) until the campaign ends for it:
// done, or every number capped, with nothing left to record. outcome says
// what became of each claim; claimed, when set, is given every batch.
// bound ends a livelock in a failure instead of a hang.
func claimUntilEnd(t *testing.T, st driver.Driver, clk *clock.Sim, runner string, id int64, batch, bound int,
	claimed func(...campaign.Claim), outcome func(campaign.Claim) campaign.Outcome) {
	var done []campaign.Result
	for range bound {
		now := clk.Now()
		cs, claimErr, err := ledger(st).RecordAndClaimN(t.Context(), runner, done, id, now, batch, batch)
		if err != nil {
			t.Errorf("%s: record: %v", runner, err)
			return
		}
		done = done[:0]
		if claimed != nil {
			claimed(cs...)
		}
		for _, cl := range cs {
			done = append(done, campaign.Result{Claim: cl, At: cl.At, Outcome: outcome(cl)})
		}
		var we *campaign.WaitError
		ended := errors.Is(claimErr, campaign.ErrDone) || errors.As(claimErr, &we) && we.Reason == campaign.WaitCapped
		switch {
		case claimErr == nil:
		case ended && len(done) == 0:
			return
		case ended:
			// Its last rows are still to record.
		case errors.As(claimErr, &we) && we.Reason == campaign.WaitInFlight:
			// Another runner holds the last rows.
		case errors.As(claimErr, &we) && we.Reason == campaign.WaitRetry:
			// Every row left was put off past the instant it claimed at
			// (for its sticky number's next token): other runners' claims,
			// at a later now, put them off while this one waited for the
			// lock. It waits until they are due, as the engine does: time
			// moves on to then. A wait for an instant already past would
			// be the claim's bug.
			if we.Until.Before(now) {
				t.Errorf("%s: claim at %v waits for retry until %v, before it", runner, now, we.Until)
				return
			}
			clk.AdvanceTo(we.Until)
		case errors.As(claimErr, &we) && (we.Reason == campaign.WaitTokens || we.Reason == campaign.WaitPriority):
			// A number sends at most its throughput a second: every
			// goroutine that finds the buckets dry moves time on a
			// little, so that several race for each refill. The other
			// campaign's turn comes as time goes too.
			clk.Advance(20 * time.Millisecond)
		default:
			t.Errorf("%s: claim: %v", runner, claimErr)
			return
		}
	}
	t.Errorf("%s: no end after %d claims", runner, bound)
}
