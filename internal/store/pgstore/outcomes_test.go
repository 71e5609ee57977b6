package pgstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestOutcomesBesideClaims: three pools (three hosts) record outcomes and
// claim (RecordAndClaimN) two campaigns to the same numbers at once, until
// the numbers' daily caps stop them. Plain sent outcomes are recorded
// outside the claim lock, failures under it: whatever their interleaving,
// no cap is exceeded, the kept counts equal a recount, and no transaction
// deadlocked (each writer takes the counts and the send log's rows in one
// order; a deadlock costs a second and a rerun).
func TestOutcomesBesideClaims(t *testing.T) {
	const (
		hosts, workers  = 3, 6
		messages, batch = 600, 12
		dailyCap        = 300
	)
	clk := clock.NewSim(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	db := newDB(t)
	stores := make([]*pgstore.Store, hosts)
	for i := range stores {
		st, err := pgstore.Open(t.Context(), db, pgstore.Options{Now: clk.Now, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
	}
	names := []string{"a", "b", "c"}
	for _, name := range names {
		storetest.MustAccount(t, stores[0], name, campaign.TierNew, storetest.Limited(1000, 2*messages, dailyCap))
	}
	camps := []campaign.Campaign{
		storetest.MustCampaign(t, stores[0], "first", messages),
		storetest.MustCampaign(t, stores[1], "second", messages), // the same numbers
	}

	var wg sync.WaitGroup
	for h, st := range stores {
		for w := range workers {
			// Two of each host's runners meet failures (recorded under
			// the claim lock), the others none (outside it).
			c, runner, fails := camps[w%2], fmt.Sprintf("h%d-w%d", h, w), w < 2
			if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: runner, CampaignID: c.ID, Host: "h", PID: 42,
				StartedAt: clk.Now(), HeartbeatAt: clk.Now()}); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				l := claim.New(st)
				var done []campaign.Result
				for range 10 * messages { // a bound, so a livelock fails instead of hanging
					cs, claimErr, err := l.RecordAndClaimN(t.Context(), runner, done, c.ID, clk.Now(), batch)
					if err != nil {
						t.Errorf("%s: record: %v", runner, err)
						return
					}
					done = done[:0]
					for _, cl := range cs {
						o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID), Class: "ok"}
						if fails && cl.Message.ID%4 == 0 {
							o = campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Class: "permanent"}
						}
						done = append(done, campaign.Result{Claim: cl, At: clk.Now(), Outcome: o})
					}
					var we *campaign.WaitError
					switch {
					case claimErr == nil:
					case len(done) == 0 && (errors.Is(claimErr, campaign.ErrDone) ||
						errors.As(claimErr, &we) && we.Reason == campaign.WaitCapped):
						return
					case errors.Is(claimErr, campaign.ErrDone), errors.As(claimErr, &we) &&
						(we.Reason == campaign.WaitCapped || we.Reason == campaign.WaitInFlight):
						// Its last claims are still to record, or another
						// runner's.
					case errors.As(claimErr, &we) && (we.Reason == campaign.WaitTokens || we.Reason == campaign.WaitPriority):
						// The buckets are dry, or the other campaign's turn.
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
	if t.Failed() {
		return
	}

	st := stores[0]
	for i, s := range stores {
		if n := pgstore.Retried(s); n != 0 {
			t.Errorf("host %d ran %d transactions again after a deadlock", i, n)
		}
	}
	if err := storetest.CheckCounts(t.Context(), st.Reader()); err != nil {
		t.Error(err)
	}
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := st.Reader().QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	attempts := 0
	for _, name := range names {
		a := storetest.AccountByName(t, st, name)
		n := count(`SELECT count(*) FROM attempts WHERE account_id = $1`, a.ID)
		if n > dailyCap || a.UsedToday > dailyCap {
			t.Errorf("number %s: %d requests, %d counted, over its cap of %d", name, n, a.UsedToday, dailyCap)
		}
		attempts += n
	}
	if attempts != len(names)*dailyCap {
		t.Errorf("%d requests, want the numbers' caps, %d", attempts, len(names)*dailyCap)
	}
	if n := count(`SELECT count(*) FROM messages WHERE state = 'sending'`); n != 0 {
		t.Errorf("%d rows left in flight", n)
	}
	if n := count(`SELECT count(*) FROM messages WHERE state = 'sent'`); n == 0 {
		t.Error("no row sent") // the outcomes outside the lock were not met
	}
}
