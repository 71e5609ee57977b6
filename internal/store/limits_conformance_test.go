package store

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
)

// The limits conformance suite: the same step tables run against the two
// real implementations of the limits — the store's own claim on a SQLite
// file (one host, the default) and the same claim asking a real
// redis-server (--limits, Store.ShareLimits) — on one fake clock, which
// the Redis gates read instead of Redis TIME (redisgate.Pool.PinClock).
// Every step asserts the same observable result from both: claims per
// account, the wait and its end when nothing was admitted, the day's
// counts. A step that differs by design names why in shared and is
// skipped under Redis; README "Several hosts (Redis)" lists them.

// limitsImpl opens one host of an implementation: a store on its own
// SQLite file whose claims decide with local limits or through Redis.
type limitsImpl struct {
	name string
	open func(t *testing.T, clk *fakeClock, path string) *confHost
	// fresh empties the shared state before a test's hosts open.
	fresh func(t *testing.T)
}

// confHost is a store and what its implementation needs to reset quotas
// and read the day's counts.
type confHost struct {
	st   *Store
	pool *redisgate.Pool // nil: local limits
}

func (h *confHost) reset(t *testing.T, force bool) {
	t.Helper()
	var err error
	if h.pool == nil {
		_, err = h.st.ResetQuota(t.Context(), nil, force)
	} else {
		_, err = h.st.ResetSharedQuota(t.Context(), h.pool, nil, force)
	}
	if err != nil {
		t.Fatalf("quota reset: %v", err)
	}
}

// used is the day's count of each account: the database's locally, the
// gate's under Redis (what every host shares).
func (h *confHost) used(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	if h.pool == nil {
		accts, err := h.st.Accounts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range accts {
			out[a.Name] = a.UsedToday
		}
		return out
	}
	states, err := h.st.SharedLimitsState(t.Context(), h.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range states {
		for i, a := range p.Accounts {
			out[a.Name] = p.State.Accounts[i].Used
		}
	}
	return out
}

// limitsImpls are the implementations under test; the Redis one is
// skipped where no redis-server is installed.
func limitsImpls(t *testing.T) []limitsImpl {
	local := limitsImpl{name: "sqlite", fresh: func(*testing.T) {}, open: func(t *testing.T, clk *fakeClock, path string) *confHost {
		return &confHost{st: openAt(t, path, clk)}
	}}
	var r *redistest.Server
	shared := limitsImpl{name: "redis", open: func(t *testing.T, clk *fakeClock, path string) *confHost {
		st := openAt(t, path, clk)
		pool, err := redisgate.Dial(r.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		pool.PinClock(clk.Now)
		if err := st.ShareLimits(t.Context(), pool, redisgate.Unavailable); err != nil {
			t.Fatal(err)
		}
		return &confHost{st: st, pool: pool}
	}}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Log("redis-server is not installed: the suite runs against the local limits only")
		return []limitsImpl{local}
	}
	r = redistest.Start(t)
	shared.fresh = func(t *testing.T) {
		if err := r.Client(t).FlushAll(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return []limitsImpl{local, shared}
}

type confOp int

const (
	opClaim       confOp = iota
	opSent               // record the last claim step's claims as sent
	opRefund             // record them as provably not accepted (refund)
	opReset              // quota reset, as the daily cron line runs it
	opResetForced        // quota reset --force
	opTier               // change tier "new" to step.tier
)

type confStep struct {
	at   time.Duration // the clock, from t0
	op   confOp
	camp int // claim: index of the campaign
	n    int // claim: at most n rows
	tier campaign.Limits

	want      map[string]int      // claim: claims per account
	wait      campaign.WaitReason // claim: the wait when none was admitted
	until     time.Duration       // claim: the wait's end from t0; 0 for none
	used      map[string]int      // after the step, when set: the day's counts
	sticky    bool                // claim: each recipient from the number that sent to them first
	sharedOff string              // non-empty: a difference by design; skipped under Redis
}

type confAccount struct {
	name      string
	o         campaign.Overrides
	portfolio string
}

type confCase struct {
	name      string
	accts     []confAccount
	global    *ratelimit.Limit
	portfolio *campaign.Portfolio
	pairGap   time.Duration
	camps     []int // rows of each campaign; all share recipients phone(0…)
	steps     []confStep
}

func confClaim(at time.Duration, camp, n int, want map[string]int) confStep {
	return confStep{at: at, camp: camp, n: n, want: want}
}

func confWait(at time.Duration, camp int, wait campaign.WaitReason, until time.Duration) confStep {
	return confStep{at: at, camp: camp, n: 10, wait: wait, until: until}
}

var limitsConformance = []confCase{
	{
		name:  "token bucket: burst, then refill at the rate",
		accts: []confAccount{{name: "a", o: limited(1, 3, 100)}},
		camps: []int{20},
		steps: []confStep{
			confClaim(0, 0, 5, map[string]int{"a": 3}),
			confWait(0, 0, campaign.WaitTokens, time.Second),
			confClaim(2500*time.Millisecond, 0, 5, map[string]int{"a": 2}),
			confWait(2500*time.Millisecond, 0, campaign.WaitTokens, 3*time.Second),
			confClaim(10*time.Second, 0, 5, map[string]int{"a": 3}), // never more than the burst
			{at: 10 * time.Second, used: map[string]int{"a": 8}},
		},
	},
	{
		name:  "two buckets: each account its own burst",
		accts: []confAccount{{name: "a", o: limited(1, 2, 100)}, {name: "b", o: limited(0.5, 1, 100)}},
		camps: []int{20},
		steps: []confStep{
			confClaim(0, 0, 10, map[string]int{"a": 2, "b": 1}),
			confWait(0, 0, campaign.WaitTokens, time.Second),
			confClaim(2*time.Second, 0, 10, map[string]int{"a": 2, "b": 1}),
		},
	},
	{
		name:  "tier change keeps the tokens earned at the old rate",
		accts: []confAccount{{name: "a"}},
		camps: []int{30},
		steps: []confStep{
			{op: opTier, tier: campaign.Limits{Rate: 1, Burst: 4, DailyCap: 100}},
			confClaim(0, 0, 10, map[string]int{"a": 4}),
			{at: 2 * time.Second, op: opTier, tier: campaign.Limits{Rate: 0.5, Burst: 4, DailyCap: 100}},
			// 2 s at 1/s earned before the change; the next token at 0.5/s.
			confClaim(2*time.Second, 0, 10, map[string]int{"a": 2}),
			confWait(2*time.Second, 0, campaign.WaitTokens, 4*time.Second),
			{at: 6 * time.Second, op: opTier, tier: campaign.Limits{Rate: 2, Burst: 4, DailyCap: 100}},
			{at: 7 * time.Second, camp: 0, n: 10, want: map[string]int{"a": 4},
				sharedOff: "a tier changed without --limits reaches Redis at the next admission: the tokens from the change to it were earned at the old rate"},
		},
	},
	{
		name:  "daily cap, and quota reset idempotent per day",
		accts: []confAccount{{name: "a", o: limited(100, 100, 3)}},
		camps: []int{20},
		steps: []confStep{
			confClaim(0, 0, 5, map[string]int{"a": 3}),
			confWait(0, 0, campaign.WaitCapped, 0),
			{at: time.Hour, op: opReset},
			confWait(time.Hour, 0, campaign.WaitCapped, 0), // the same day: nothing new
			{at: 24 * time.Hour, op: opReset},
			{at: 24 * time.Hour, op: opReset}, // a cron line run twice
			confClaim(24*time.Hour, 0, 5, map[string]int{"a": 3}),
			confWait(24*time.Hour, 0, campaign.WaitCapped, 0),
			{at: 24 * time.Hour, used: map[string]int{"a": 3}},
			{at: 25 * time.Hour, op: opResetForced},
			confClaim(25*time.Hour, 0, 5, map[string]int{"a": 3}),
		},
	},
	{
		name:  "refunds give the cap back exactly once",
		accts: []confAccount{{name: "a", o: limited(100, 100, 3)}},
		camps: []int{10},
		steps: []confStep{
			confClaim(0, 0, 3, map[string]int{"a": 3}),
			{op: opRefund},
			{op: opRefund}, // the same answers recorded again give nothing more
			confClaim(time.Second, 0, 10, map[string]int{"a": 3}),
			confWait(time.Second, 0, campaign.WaitCapped, 0),
			{at: time.Second, used: map[string]int{"a": 3}},
			{at: time.Second, op: opSent},
			{at: time.Second, op: opRefund}, // sent is final: no refund
			confWait(2*time.Second, 0, campaign.WaitCapped, 0),
		},
	},
	{
		name:   "global bucket over every account",
		accts:  []confAccount{{name: "a", o: limited(100, 100, 100)}, {name: "b", o: limited(100, 100, 100)}},
		global: &ratelimit.Limit{Rate: 1, Burst: 4},
		camps:  []int{20},
		steps: []confStep{
			confClaim(0, 0, 10, map[string]int{"a": 2, "b": 2}),
			confWait(0, 0, campaign.WaitGlobal, time.Second),
			confClaim(1500*time.Millisecond, 0, 10, map[string]int{"a": 1}),
			confWait(1500*time.Millisecond, 0, campaign.WaitGlobal, 2*time.Second),
		},
	},
	{
		name:      "portfolio reach: moving 24 h, margin, free re-send in the window",
		accts:     []confAccount{{name: "a", o: limited(100, 100, 1000), portfolio: "acme"}},
		portfolio: &campaign.Portfolio{Name: "acme", PinnedLimit: 8, Margin: 0.25}, // 6 new recipients a day
		camps:     []int{4, 10},
		steps: []confStep{
			confClaim(0, 0, 4, map[string]int{"a": 4}),
			// The 4 in the window go free, 2 new fill the 6.
			confClaim(time.Hour, 1, 10, map[string]int{"a": 6}),
			// A re-send renews its recipient in the window: all 6 leave it
			// 24 h after the second claim.
			confWait(time.Hour, 1, campaign.WaitReach, 25*time.Hour),
			confWait(24*time.Hour, 1, campaign.WaitReach, 25*time.Hour),
			confClaim(25*time.Hour, 1, 10, map[string]int{"a": 4}),
		},
	},
	{
		name:    "pair gap between two messages to one person",
		accts:   []confAccount{{name: "a", o: limited(100, 100, 1000)}},
		pairGap: time.Minute,
		camps:   []int{3, 3},
		steps: []confStep{
			confClaim(0, 0, 3, map[string]int{"a": 3}),
			confWait(10*time.Second, 1, campaign.WaitRetry, time.Minute),
			confClaim(time.Minute, 1, 3, map[string]int{"a": 3}),
		},
	},
	{
		name:  "sticky sender: a recipient's second message from the same number",
		accts: []confAccount{{name: "a", o: limited(100, 100, 1000)}, {name: "b", o: limited(100, 100, 1000)}},
		camps: []int{6, 6},
		steps: []confStep{
			confClaim(0, 0, 6, map[string]int{"a": 3, "b": 3}),
			{op: opSent},
			{at: time.Hour, camp: 1, n: 6, want: map[string]int{"a": 3, "b": 3}, sticky: true},
		},
	},
	{
		name:  "sticky sender: a recipient waits for their number's token",
		accts: []confAccount{{name: "a", o: limited(1, 2, 1000)}, {name: "b", o: limited(1, 2, 1000)}},
		camps: []int{4, 4},
		steps: []confStep{
			confClaim(0, 0, 4, map[string]int{"a": 2, "b": 2}),
			{op: opSent},
			// Both numbers empty: the rows of the second campaign wait
			// for their own number's next token.
			confWait(0, 1, campaign.WaitRetry, time.Second),
			{at: 2 * time.Second, camp: 1, n: 4, want: map[string]int{"a": 2, "b": 2}, sticky: true},
		},
	},
	{
		// Regression: under --limits a recipient whose number was empty
		// ended the claim, holding up every row behind it.
		name:  "sticky sender: a recipient stuck to an empty number does not hold up the others",
		accts: []confAccount{{name: "a", o: limited(1, 1, 1000)}, {name: "b", o: limited(1, 100, 1000)}},
		camps: []int{2, 4},
		steps: []confStep{
			confClaim(0, 0, 2, map[string]int{"a": 1, "b": 1}),
			{op: opSent},
			{camp: 1, n: 4, want: map[string]int{"b": 3}, sticky: true},
			{at: time.Second, camp: 1, n: 4, want: map[string]int{"a": 1}, sticky: true},
		},
	},
}

func TestLimitsConformance(t *testing.T) {
	impls := limitsImpls(t)
	for _, tc := range limitsConformance {
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range impls {
				t.Run(impl.name, func(t *testing.T) {
					runConformance(t, impl, tc)
				})
			}
		})
	}
}

func runConformance(t *testing.T, impl limitsImpl, tc confCase) {
	ctx := t.Context()
	clk := newFakeClock()
	impl.fresh(t)
	h := impl.open(t, clk, filepath.Join(t.TempDir(), "wasend.db"))
	setUpConformance(t, h, tc)
	var camps []campaign.Campaign
	for i, n := range tc.camps {
		c := mustCampaign(t, h.st, fmt.Sprint("c", i), n)
		if err := h.st.SetPairGap(ctx, c.ID, tc.pairGap); err != nil {
			t.Fatal(err)
		}
		camps = append(camps, c)
	}
	var last []campaign.Claim
	first := map[string]string{} // recipient → the account that first sent to them
	for i, s := range tc.steps {
		if s.sharedOff != "" && h.pool != nil {
			t.Logf("step %d skipped under Redis: %s", i, s.sharedOff)
			continue
		}
		now := at(s.at)
		clk.Set(now)
		switch s.op {
		case opClaim:
			if s.n == 0 {
				break
			}
			cs, err := h.st.ClaimN(ctx, camps[s.camp].ID, "r1", now, s.n)
			var we *campaign.WaitError
			switch {
			case errors.As(err, &we):
				if s.wait == "" {
					t.Fatalf("step %d at %v: waits for %s until %v, want claims %v", i, s.at, we.Reason, we.Until, s.want)
				}
				var until time.Time
				if s.until != 0 {
					until = at(s.until)
				}
				if we.Reason != s.wait || !we.Until.Equal(until) {
					t.Fatalf("step %d at %v: waits for %s until %v, want %s until %v", i, s.at, we.Reason, we.Until, s.wait, until)
				}
				continue
			case err != nil:
				t.Fatalf("step %d at %v: %v", i, s.at, err)
			}
			got := map[string]int{}
			for _, c := range cs {
				got[c.Account.Name]++
				if a, ok := first[c.Message.Phone]; !ok {
					first[c.Message.Phone] = c.Account.Name
				} else if s.sticky && a != c.Account.Name {
					t.Fatalf("step %d at %v: %s from %s, want their first number %s", i, s.at, c.Message.Phone, c.Account.Name, a)
				}
			}
			if s.wait != "" || fmt.Sprint(got) != fmt.Sprint(s.want) {
				t.Fatalf("step %d at %v: claims %v, want %v (wait %q)", i, s.at, got, s.want, s.wait)
			}
			last = cs
		case opSent, opRefund:
			o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid"}
			if s.op == opRefund {
				o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, Refund: true}
			}
			for _, c := range last {
				if err := h.st.Record(ctx, c, "r1", o, now); err != nil {
					t.Fatalf("step %d: record %d: %v", i, c.Message.ID, err)
				}
			}
		case opReset, opResetForced:
			h.reset(t, s.op == opResetForced)
		case opTier:
			if err := h.st.SetTier(ctx, campaign.TierNew, s.tier); err != nil {
				t.Fatal(err)
			}
		}
		if s.used != nil {
			if got := h.used(t); fmt.Sprint(got) != fmt.Sprint(s.used) {
				t.Fatalf("step %d at %v: the day's counts %v, want %v", i, s.at, got, s.used)
			}
		}
	}
}

// setUpConformance adds the case's accounts, portfolio and global bucket,
// and starts the quota day (the only way to start shared state).
func setUpConformance(t *testing.T, h *confHost, tc confCase) {
	t.Helper()
	ctx := t.Context()
	if tc.portfolio != nil {
		if _, err := h.st.AddPortfolio(ctx, *tc.portfolio); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range tc.accts {
		mustAccount(t, h.st, a.name, campaign.TierNew, a.o)
		if a.portfolio != "" {
			if _, err := h.st.UpdateAccount(ctx, a.name, AccountChange{Portfolio: ptr(a.portfolio)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tc.global != nil {
		if err := h.st.SetGlobalLimit(ctx, true, *tc.global); err != nil {
			t.Fatal(err)
		}
	}
	h.reset(t, true)
}

// TestLimitsConformanceConcurrent has N goroutines on each of M stores
// claim at once, on a clock that only moves between rounds: M stores on
// one SQLite file (M processes of one host) for the local limits, M
// stores on M files (M hosts) sharing one Redis for the shared ones.
// Whatever the interleaving, every account admits exactly its burst (then
// what the rate refilled), the global bucket and the cap bind exactly, and
// no row is claimed twice.
func TestLimitsConformanceConcurrent(t *testing.T) {
	const stores, workers = 3, 4
	for _, impl := range limitsImpls(t) {
		t.Run(impl.name, func(t *testing.T) {
			ctx := t.Context()
			clk := newFakeClock()
			dir := t.TempDir()
			impl.fresh(t)
			var hosts []*confHost
			var camps []campaign.Campaign
			for i := range stores {
				path := filepath.Join(dir, "wasend.db")
				if impl.name == "redis" {
					path = filepath.Join(dir, fmt.Sprint("host", i, ".db"))
				}
				h := impl.open(t, clk, path)
				if i == 0 || h.pool != nil {
					setUpConformance(t, h, confCase{
						accts:  []confAccount{{name: "a", o: limited(1, 5, 9)}, {name: "b", o: limited(1, 4, 100)}, {name: "c", o: limited(1, 6, 100)}},
						global: &ratelimit.Limit{Rate: 2, Burst: 12},
					})
					camps = append(camps, mustCampaign(t, h.st, "race", 60))
				}
				hosts = append(hosts, h)
			}
			var (
				mu      sync.Mutex
				perAcct = map[string]int{}
				seen    = map[string]bool{} // host's campaign and row
			)
			round := func(now time.Time) int {
				clk.Set(now)
				total := 0
				var wg sync.WaitGroup
				for i, h := range hosts {
					camp := camps[min(i, len(camps)-1)]
					for w := range workers {
						wg.Go(func() {
							for range 1000 {
								cs, err := h.st.ClaimN(ctx, camp.ID, fmt.Sprint("r", i, w), now, 2)
								var we *campaign.WaitError
								if errors.As(err, &we) {
									return
								}
								if err != nil {
									t.Error(err)
									return
								}
								mu.Lock()
								for _, c := range cs {
									key := fmt.Sprint(h.st.Path(), c.Message.ID)
									if seen[key] {
										t.Errorf("row %s claimed twice", key)
									}
									seen[key] = true
									perAcct[c.Account.Name]++
									total++
								}
								mu.Unlock()
							}
						})
					}
				}
				wg.Wait()
				return total
			}
			// At t0 the global burst of 12 binds before the accounts' 15.
			if n := round(t0); n != 12 {
				t.Errorf("at t0: %d admitted, want the global burst of 12 (%v)", n, perAcct)
			}
			// 10 s later every bucket is full again: the global one binds
			// again (a's cap of 9 leaves it at least 4 of its 5).
			if n := round(at(10 * time.Second)); n != 12 {
				t.Errorf("10 s later: %d admitted, want the global burst of 12 (%v)", n, perAcct)
			}
			// Without the global bucket, 10 s later again: each account
			// its burst, a only up to its cap of 9.
			for i, h := range hosts {
				if i == 0 || h.pool != nil {
					if err := h.st.SetGlobalLimit(ctx, false, ratelimit.Limit{Rate: 2, Burst: 12}); err != nil {
						t.Fatal(err)
					}
				}
			}
			aBefore := perAcct["a"]
			if n, want := round(at(20*time.Second)), 9-aBefore+4+6; n != want {
				t.Errorf("without the global bucket: %d admitted, want %d (a to its cap, b 4, c 6; %v)", n, want, perAcct)
			}
			if perAcct["a"] != 9 {
				t.Errorf("a admitted %d over the day, want its cap of 9 (%v)", perAcct["a"], perAcct)
			}
			if got := hosts[0].used(t); got["a"] != 9 {
				t.Errorf("the day's counts %v, want a at its cap of 9", got)
			}
		})
	}
}
