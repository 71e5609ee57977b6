package claim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
)

// The limits conformance suite: the same step tables run against the two
// real implementations of the limits — the store's own claim on a SQLite
// file (one host, the default) and the same claim asking a real
// redis-server (--limits, Store.ShareLimits) — on one fake clock, which
// the Redis gates read instead of Redis TIME (redisgate.Pool.PinClock).
// Every step asserts the same observable result from both: claims per
// account, the wait and its end when nothing was admitted, the day's
// counts. A step that differs by design says why in sharedOff and is
// skipped under Redis (limitsDifferences); docs/architecture.md#tests-with-redis
// lists them.

// limitsImpl opens one host of an implementation: a store on its own
// SQLite file whose claims decide with local limits or through Redis.
type limitsImpl struct {
	name string
	open func(t *testing.T, clk *clock.Sim, path string) *confHost
	// fresh empties the shared state before a test's hosts open.
	fresh func(t *testing.T)
}

// confHost is a store and what its implementation needs to reset quotas
// and read the day's counts.
type confHost struct {
	st   *store.Store
	pool *redisgate.Pool // nil: local limits
	url  string          // the Redis's URL, for processes of this host
}

func (h *confHost) reset(t *testing.T, force bool) {
	t.Helper()
	var err error
	if h.pool == nil {
		_, err = h.st.ResetQuota(t.Context(), nil, force)
	} else {
		err = sharedQuotaReset(t.Context(), h.st, h.pool, force)
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
	out, err := sharedDayCounts(t.Context(), h.st, h.pool)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// limitsImpls are the implementations under test; the Redis one is
// skipped where no redis-server is installed.
func limitsImpls(t *testing.T) []limitsImpl {
	local := limitsImpl{name: "sqlite", fresh: func(*testing.T) {}, open: func(t *testing.T, clk *clock.Sim, path string) *confHost {
		return &confHost{st: openAt(t, path, clk)}
	}}
	var r *redistest.Server
	shared := limitsImpl{name: "redis", open: func(t *testing.T, clk *clock.Sim, path string) *confHost {
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
		return &confHost{st: st, pool: pool, url: r.URL()}
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
	opClaim       confOp = iota // claim at most n rows; n 0 only checks the counts
	opSent                      // record the last claim step's claims as sent
	opRefund                    // record them as provably not accepted (refund)
	opReset                     // quota reset, as the daily cron line runs it
	opResetForced               // quota reset --force
	opTier                      // change tier "new" to step.tier
	opThrottle                  // record them as throttled (not accepted, refund, the account cools down a minute)
)

type confStep struct {
	at   time.Duration // the clock, from t0
	op   confOp
	camp int    // claim: index of the campaign
	acct string // sent, refund, throttle: only that account's claims; all when empty
	n    int    // claim: at most n rows
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
	camps     []int                  // rows of each campaign; all share recipients phone(0…)
	shares    map[int]campaign.Share // by campaign index
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
			confWait(time.Hour, 0, campaign.WaitCapped, 0),    // the same day: nothing new
			confWait(24*time.Hour, 0, campaign.WaitCapped, 0), // a new day starts with its reset
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
		name:  "a refund of yesterday's claim gives nothing back today",
		accts: []confAccount{{name: "a", o: limited(100, 100, 3)}},
		camps: []int{10},
		steps: []confStep{
			confClaim(0, 0, 3, map[string]int{"a": 3}),
			{at: 24 * time.Hour, op: opReset},
			{at: 24 * time.Hour, op: opRefund},
			confClaim(24*time.Hour, 0, 10, map[string]int{"a": 3}),
			confWait(24*time.Hour, 0, campaign.WaitCapped, 0),
			{at: 24 * time.Hour, used: map[string]int{"a": 3}},
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
			{at: 10 * time.Second, op: opSent},
			confWait(20*time.Second, 1, campaign.WaitRetry, time.Minute),
			confClaim(time.Minute, 1, 3, map[string]int{"a": 3}),
		},
	},
	{
		name:      "a refunded message holds nobody to the pair gap or the reach",
		accts:     []confAccount{{name: "a", o: limited(100, 100, 1000), portfolio: "acme"}},
		portfolio: &campaign.Portfolio{Name: "acme", PinnedLimit: 3},
		pairGap:   time.Minute,
		camps:     []int{3, 6},
		steps: []confStep{
			confClaim(0, 0, 3, map[string]int{"a": 3}),
			{at: time.Second, op: opRefund},
			// Three new recipients fill the reach of 3; the refunded
			// three are neither within the gap nor in the window.
			confClaim(10*time.Second, 1, 6, map[string]int{"a": 3}),
			confWait(10*time.Second, 1, campaign.WaitReach, 24*time.Hour+10*time.Second),
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

// The differences by design: each case runs the same steps on both, and
// the step where the shared limits differ is skipped under Redis with why.
var limitsDifferences = []confCase{
	{
		name:      "difference: the global bucket is per portfolio under Redis",
		accts:     []confAccount{{name: "a", o: limited(100, 100, 1000), portfolio: "acme"}, {name: "b", o: limited(100, 100, 1000)}},
		global:    &ratelimit.Limit{Rate: 0.001, Burst: 2},
		portfolio: &campaign.Portfolio{Name: "acme", PinnedLimit: 1000},
		camps:     []int{10},
		steps: []confStep{
			{camp: 0, n: 10, want: map[string]int{"a": 1, "b": 1},
				sharedOff: "the shared global bucket is one per portfolio (accounts in none share the default portfolio's): two portfolios admit a burst each"},
		},
	},
	{
		name:   "difference: a high campaign's borrowing does not apply under Redis",
		accts:  []confAccount{{name: "a", o: limited(1, 2, 1000)}},
		camps:  []int{10},
		shares: map[int]campaign.Share{0: {Priority: campaign.High, Weight: 1, Borrow: 2 * time.Second}},
		steps: []confStep{
			{camp: 0, n: 10, want: map[string]int{"a": 4},
				sharedOff: "borrowing ahead of the bucket is this host's arrangement between its campaigns; the shared bucket lends nothing"},
		},
	},
	{
		name:  "difference: a sticky number cooling down on this host is not waited for under Redis",
		accts: []confAccount{{name: "a", o: limited(100, 100, 1000)}, {name: "b", o: limited(100, 100, 1000)}},
		camps: []int{4, 4},
		steps: []confStep{
			confClaim(0, 0, 2, map[string]int{"a": 1, "b": 1}),
			{op: opSent},
			confClaim(0, 0, 2, map[string]int{"a": 1, "b": 1}),
			{op: opThrottle, acct: "a"},
			{op: opSent, acct: "b"},
			// The recipient stuck to a waits out its cooldown; the others
			// (the refunded one is nobody's) go from b.
			{at: time.Second, camp: 1, n: 4, want: map[string]int{"b": 3}, sticky: true,
				sharedOff: "the gate knows nothing of this host's cooldowns: a cooling number is not offered, and its recipients go from another number (counted as a sticky break)"},
		},
	},
}

func TestLimitsConformance(t *testing.T) {
	impls := limitsImpls(t)
	for _, tc := range append(limitsConformance, limitsDifferences...) {
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
		if sh, ok := tc.shares[i]; ok {
			setShare(t, h.st, c.ID, sh)
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
			cs, err := New(h.st).ClaimN(ctx, camps[s.camp].ID, "r1", now, s.n)
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
		case opSent, opRefund, opThrottle:
			o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid"}
			switch s.op {
			case opRefund:
				o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, Refund: true}
			case opThrottle:
				o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, Refund: true, ErrorCode: 130429,
					Throttle: &campaign.Throttle{Cooldown: time.Minute}}
			}
			for _, c := range last {
				if s.acct != "" && c.Account.Name != s.acct {
					continue
				}
				if s.op != opSent {
					delete(first, c.Message.Phone) // not accepted: nobody's recipient
				}
				// An answer recorded again is refused by the row's fence.
				if err := record(ctx, h.st, c, "r1", o, now); err != nil && !errors.Is(err, campaign.ErrFenced) {
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
			if _, err := h.st.UpdateAccount(ctx, a.name, campaign.AccountChange{Portfolio: ptr(a.portfolio)}); err != nil {
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

// TestLimitsConformanceConcurrent has N goroutines in each of M stores
// claim at once, on a clock that only moves between rounds: the stores are
// M processes (this test binary run again) or M stores in this one; on one
// SQLite file (one host) for the local limits, on M files (M hosts) sharing
// one Redis for the shared ones. Whatever the interleaving, the global
// bucket, the accounts' buckets and a's cap admit exactly what they allow,
// and no row is claimed twice.
func TestLimitsConformanceConcurrent(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("inside a helper process")
	}
	const stores, workers = 3, 4
	for _, impl := range limitsImpls(t) {
		for _, procs := range []bool{false, true} {
			name := impl.name + "/goroutines"
			if procs {
				name = impl.name + "/processes"
			}
			t.Run(name, func(t *testing.T) {
				ctx := t.Context()
				clk := newFakeClock()
				dir := t.TempDir()
				impl.fresh(t)
				var hosts []*confHost
				var camps []int64
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
						camps = append(camps, mustCampaign(t, h.st, "race", 60).ID)
					}
					hosts = append(hosts, h)
				}
				perAcct := map[string]int{}
				seen := map[string]bool{} // a host's file and row
				round := func(now time.Time) int {
					clk.Set(now)
					var got []hostClaim
					if procs {
						got = claimInProcesses(t, hosts, camps, now, workers)
					} else {
						got = claimInGoroutines(t, hosts, camps, now, workers)
					}
					for _, c := range got {
						key := c.path + ":" + strconv.FormatInt(c.message, 10)
						if seen[key] {
							t.Errorf("row %s claimed twice", key)
						}
						seen[key] = true
						perAcct[c.account]++
					}
					return len(got)
				}
				// At t0 the global burst of 12 binds before the accounts' 15.
				if n := round(t0); n != 12 {
					t.Errorf("at t0: %d admitted, want the global burst of 12 (%v)", n, perAcct)
				}
				// 10 s later every bucket is full again: the global one
				// binds again (a's cap of 9 leaves it at least 4 of its 5).
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
}

// hostClaim is one claim of a concurrent round: the host's file, the row
// and the account that sends it.
type hostClaim struct {
	path    string
	message int64
	account string
}

// claimUntilWait has workers goroutines claim from one campaign of st at
// now until each is told to wait.
func claimUntilWait(ctx context.Context, st *store.Store, campaignID int64, now time.Time, workers int, runner string) ([]hostClaim, error) {
	var (
		mu    sync.Mutex
		out   []hostClaim
		first error
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for range 1000 { // a bound, so a livelock fails instead of hanging
				cs, err := New(st).ClaimN(ctx, campaignID, fmt.Sprint(runner, "-", w), now, 2)
				var we *campaign.WaitError
				if errors.As(err, &we) {
					return
				}
				mu.Lock()
				if err != nil {
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				for _, c := range cs {
					out = append(out, hostClaim{path: st.Path(), message: c.Message.ID, account: c.Account.Name})
				}
				mu.Unlock()
			}
			mu.Lock()
			first = cmp.Or(first, errors.New("still claiming after 1000 claims"))
			mu.Unlock()
		})
	}
	wg.Wait()
	return out, first
}

// campaignOf is host i's campaign: its own under Redis, the one of the
// shared file locally.
func campaignOf(camps []int64, i int) int64 { return camps[min(i, len(camps)-1)] }

func claimInGoroutines(t *testing.T, hosts []*confHost, camps []int64, now time.Time, workers int) []hostClaim {
	t.Helper()
	var (
		mu  sync.Mutex
		out []hostClaim
		wg  sync.WaitGroup
	)
	for i, h := range hosts {
		wg.Go(func() {
			cs, err := claimUntilWait(t.Context(), h.st, campaignOf(camps, i), now, workers, fmt.Sprint("r", i))
			if err != nil {
				t.Errorf("host %d: %v", i, err)
			}
			mu.Lock()
			out = append(out, cs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// helperEnv tells this test binary, run again, that it is one of the
// processes of TestLimitsConformanceConcurrent.
const helperEnv = "WASEND_CONFORMANCE_HELPER"

func claimInProcesses(t *testing.T, hosts []*confHost, camps []int64, now time.Time, workers int) []hostClaim {
	t.Helper()
	cmds := make([]*exec.Cmd, len(hosts))
	outs := make([]strings.Builder, len(hosts))
	for i, h := range hosts {
		url := ""
		if h.pool != nil {
			url = h.url
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestLimitsConformanceHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+strings.Join([]string{
			h.st.Path(), strconv.FormatInt(campaignOf(camps, i), 10), strconv.FormatInt(now.UnixNano(), 10),
			strconv.Itoa(workers), fmt.Sprint("p", i), url}, "|"))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	var out []hostClaim
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "claimed" {
				continue
			}
			id, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("process %d: %q", i, line)
			}
			out = append(out, hostClaim{path: f[1], message: id, account: f[3]})
		}
	}
	return out
}

// TestLimitsConformanceHelperProcess is one of the processes of
// TestLimitsConformanceConcurrent: it opens a host's database at a fixed
// instant (sharing limits through Redis when given its URL), claims until
// told to wait and prints its claims.
func TestLimitsConformanceHelperProcess(t *testing.T) {
	env := os.Getenv(helperEnv)
	if env == "" {
		t.Skip("run by TestLimitsConformanceConcurrent")
	}
	f := strings.Split(env, "|")
	if len(f) != 6 {
		t.Fatalf("%s=%q", helperEnv, env)
	}
	camp, err1 := strconv.ParseInt(f[1], 10, 64)
	nanos, err2 := strconv.ParseInt(f[2], 10, 64)
	workers, err3 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	clk.Set(time.Unix(0, nanos).UTC())
	st := openAt(t, f[0], clk)
	if f[5] != "" {
		pool, err := redisgate.Dial(f[5])
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		pool.PinClock(clk.Now)
		if err := st.ShareLimits(t.Context(), pool, redisgate.Unavailable); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := claimUntilWait(t.Context(), st, camp, clk.Now(), workers, f[4])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		fmt.Printf("claimed %s %d %s\n", c.path, c.message, c.account)
	}
}
