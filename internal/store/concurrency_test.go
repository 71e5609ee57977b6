package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// TestClaimConcurrentProcesses runs two Stores on one file, as two wasend
// processes would, with 8 goroutines claiming from one campaign on a shared
// fake clock. Whatever the interleaving, no message is claimed twice and no
// account (nor the global bucket) spends more than its burst plus its rate
// over the elapsed time, or more than its daily cap.
func TestClaimConcurrentProcesses(t *testing.T) {
	tests := []struct {
		name   string
		global *ratelimit.Limit
	}{
		{name: "account buckets"},
		{name: "with a global bucket", global: &ratelimit.Limit{Rate: 1.5, Burst: 2}},
	}
	limits := map[string]campaign.Limits{
		"a": {Rate: 2, Burst: 3, DailyCap: 15},
		"b": {Rate: 1, Burst: 2, DailyCap: 1000},
		"c": {Rate: 0.5, Burst: 4, DailyCap: 1000},
	}
	const messages, workers = 80, 8
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			path := filepath.Join(t.TempDir(), "wasend.db")
			stores := []*Store{openAt(t, path, clk), openAt(t, path, clk)}
			for _, name := range []string{"a", "b", "c"} {
				l := limits[name]
				mustAccount(t, stores[0], name, campaign.TierNew, limited(l.Rate, l.Burst, l.DailyCap))
			}
			if tt.global != nil {
				if err := stores[1].SetGlobalLimit(t.Context(), true, *tt.global); err != nil {
					t.Fatal(err)
				}
			}
			c := mustCampaign(t, stores[1], "race", messages)

			var (
				mu      sync.Mutex
				claimed = map[int64]string{} // message → runner
				dupes   []string
				wg      sync.WaitGroup
			)
			for w := range workers {
				st, runner := stores[w%2], fmt.Sprint("r", w)
				wg.Go(func() {
					for range 20000 { // a bound, so a livelock fails instead of hanging
						now := clk.Now()
						cl, err := st.Claim(t.Context(), c.ID, runner, now)
						var we *campaign.WaitError
						switch {
						case err == nil:
							mu.Lock()
							if prev, ok := claimed[cl.Message.ID]; ok {
								dupes = append(dupes, fmt.Sprintf("message %d by %s and %s", cl.Message.ID, prev, runner))
							}
							claimed[cl.Message.ID] = runner
							mu.Unlock()
							if err := st.Record(t.Context(), cl, runner, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}, now); err != nil {
								t.Error(err)
								return
							}
						case errors.Is(err, campaign.ErrDone):
							return
						case errors.As(err, &we):
							switch we.Reason {
							case campaign.WaitTokens, campaign.WaitGlobal:
								// Move time on by at most a quarter second, so
								// several goroutines race for each refill.
								clk.AdvanceTo(minTime(we.Until, now.Add(250*time.Millisecond)))
							case campaign.WaitInFlight:
								// Another goroutine holds the last rows.
							default:
								t.Errorf("%s: unexpected wait %v", runner, we)
								return
							}
						default:
							t.Errorf("%s: %v", runner, err)
							return
						}
					}
					t.Errorf("%s: no end after 20000 claims", runner)
				})
			}
			wg.Wait()

			for _, d := range dupes {
				t.Errorf("claimed twice: %s", d)
			}
			if len(claimed) != messages {
				t.Errorf("%d messages claimed, want %d", len(claimed), messages)
			}
			st := stores[0]
			if n := countRows(t, st, `SELECT count(*) FROM attempts`); n != messages {
				t.Errorf("%d attempts, want %d: some message was claimed more than once", n, messages)
			}
			if n := countRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sent' AND wamid = 'wamid.' || id`); n != messages {
				t.Errorf("%d messages sent with their wamid, want %d", n, messages)
			}

			// The attempts table in commit order gives each account's spends.
			// A token taken with a stale clock is booked at the bucket's own
			// time (its At never moves back), so the bound is checked on
			// effective times: the running maximum of claimed_at.
			spends := map[string][]time.Time{}
			var all []time.Time
			rows, err := st.db.QueryContext(t.Context(), `SELECT a.name, t.claimed_at FROM attempts t JOIN accounts a ON a.id = t.account_id ORDER BY t.id`)
			if err != nil {
				t.Fatal(err)
			}
			last := map[string]int64{}
			var lastAll int64
			for rows.Next() {
				var name string
				var ns int64
				if err := rows.Scan(&name, &ns); err != nil {
					t.Fatal(err)
				}
				last[name] = max(last[name], ns)
				lastAll = max(lastAll, ns)
				spends[name] = append(spends[name], time.Unix(0, last[name]))
				all = append(all, time.Unix(0, lastAll))
			}
			rows.Close()
			elapsed := clk.Now().Sub(t0)
			t.Logf("elapsed %v on the fake clock; spends a=%d b=%d c=%d", elapsed, len(spends["a"]), len(spends["b"]), len(spends["c"]))
			for name, l := range limits {
				checkWindows(t, name, spends[name], ratelimit.Limit{Rate: l.Rate, Burst: l.Burst})
				if n := len(spends[name]); n > l.DailyCap {
					t.Errorf("%s: %d sends, daily cap %d", name, n, l.DailyCap)
				}
				if n, bound := float64(len(spends[name])), float64(l.Burst)+l.Rate*elapsed.Seconds(); n > bound+1e-6 {
					t.Errorf("%s: %v sends in %v, bound %v", name, n, elapsed, bound)
				}
			}
			if a := accountByName(t, st, "a"); a.UsedToday != len(spends["a"]) || a.UsedToday != limits["a"].DailyCap {
				t.Errorf("a: used %d, spent %d; want the cap %d reached", a.UsedToday, len(spends["a"]), limits["a"].DailyCap)
			}
			if tt.global != nil {
				sort.Slice(all, func(i, j int) bool { return all[i].Before(all[j]) })
				checkWindows(t, "global", all, *tt.global)
			}
		})
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// checkWindows fails when more than burst + rate·(b−a) spends fall in some
// window [a, b] of the sorted instants.
func checkWindows(t *testing.T, name string, spends []time.Time, l ratelimit.Limit) {
	t.Helper()
	for i := range spends {
		for j := i; j < len(spends); j++ {
			n := float64(j - i + 1)
			if bound := float64(l.Burst) + l.Rate*spends[j].Sub(spends[i]).Seconds() + 1e-6; n > bound {
				t.Errorf("%s: %v spends in [+%v, +%v], bound %v", name, n, spends[i].Sub(t0), spends[j].Sub(t0), bound)
				return
			}
		}
	}
}
