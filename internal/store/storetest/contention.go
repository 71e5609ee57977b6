package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
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
	db := s.h.NewDB(t)
	stores := make([]driver.Driver, handles)
	for i := range stores {
		stores[i] = s.openAt(t, db, clk, nil)
	}
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
				var done []campaign.Result
				for range 10 * messages { // a bound, so a livelock fails instead of hanging
					cs, claimErr, err := ledger(st).RecordAndClaimN(t.Context(), runner, done, c.ID, clk.Now(), batch)
					if err != nil {
						t.Errorf("%s: record: %v", runner, err)
						return
					}
					done = done[:0]
					claimed.add(runner, cs...)
					for _, cl := range cs {
						done = append(done, campaign.Result{Claim: cl, At: cl.At,
							Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}})
					}
					var we *campaign.WaitError
					switch {
					case claimErr == nil:
					case errors.Is(claimErr, campaign.ErrDone) && len(done) == 0:
						return
					case errors.Is(claimErr, campaign.ErrDone):
						// Its last rows are still to record.
					case errors.As(claimErr, &we) && we.Reason == campaign.WaitInFlight:
						// Another runner holds the last rows.
					case errors.As(claimErr, &we) && we.Reason == campaign.WaitTokens:
						// A number sends at most its throughput a second:
						// every goroutine that finds the buckets dry moves
						// time on a little, so that several race for each
						// refill.
						clk.Advance(20 * time.Millisecond)
					default:
						t.Errorf("%s: claim: %v", runner, claimErr)
						return
					}
				}
				t.Errorf("%s: no end after %d claims", runner, 10*messages)
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
