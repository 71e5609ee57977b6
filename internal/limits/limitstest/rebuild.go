package limitstest

import (
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// RebuildTables are the steps of a lost day rebuilt from the hosts'
// databases: each host's count added once, the reach window, the pair gap
// and the repeat guard rebuilt from its messages on the gate's clock, a
// host admitted nothing before it added its part, and a living state never
// added to.
var RebuildTables = []Table{
	{
		Name: "a lost day is rebuilt from each host's part, once each; a host is admitted only after adding its own",
		Accounts: []limits.Account{
			acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 10),
			acct("b", ratelimit.Limit{Rate: 1, Burst: 100}, 10),
		},
		Reach:   ratelimit.Reach{Limit: 5},
		PairGap: time.Hour,
		Steps: []Step{
			{At: time.Hour, Op: Admit, Claim: "c1", To: "r1", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			// A living state takes no part: it would count twice.
			{At: time.Hour, Op: Rebuild, Part: &Part{Host: "h1", Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 1}}}, WantErr: limits.ErrNotLost},
			{At: 2 * time.Hour, Op: Lose},
			{At: 2 * time.Hour, Op: Admit, Claim: "c2", To: "r2", Host: "h1", WantErr: limits.ErrStateLost},
			// h1's part, its clock ten minutes ahead (its instants below
			// are the gate's, as the host reads them): 4 on a, one of
			// yesterday's on b (not this day's), two recipients in the
			// window (one too old), a guard.
			{At: 2 * time.Hour, Op: Rebuild, Part: &Part{Host: "h1", Skew: 10 * time.Minute,
				Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 4}, {Account: "b", Day: "2026-03-01", Used: 7}},
				Window:   []PartContact{{To: "r1", Account: "a", At: 90 * time.Minute}, {To: "r0", Account: "a", At: -23 * time.Hour}},
				Guards:   []PartGuard{{To: "r1", Guard: "t:promo", At: 90 * time.Minute}},
			}, WantRebuild: &limits.RebuildResult{Started: true, Added: map[string]int{"a": 4}}},
			{At: 2 * time.Hour, Op: Check, WantDay: []string{Today + "#1", Today + "#1"}, WantUsedEach: []int{4, 0}, WantTokensEach: []float64{100, 100},
				WantReach: &ReachWant{Used: 1, Oldest: 90 * time.Minute}},
			// Again: nothing added.
			{At: 2 * time.Hour, Op: Rebuild, Part: &Part{Host: "h1", Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 4}}},
				WantRebuild: &limits.RebuildResult{Already: true, OnRebuiltDay: map[string]bool{"a": true}}},
			{At: 2 * time.Hour, Op: Check, WantUsedEach: []int{4, 0}, WantTokensEach: []float64{100, 100}},
			// h1 is admitted; r1 is within the pair gap of its message.
			{At: 2 * time.Hour, Op: Admit, Claim: "c3", To: "r1", Host: "h1", WantReason: limits.ReasonPair, WantUntil: 150 * time.Minute},
			{At: 2 * time.Hour, Op: Admit, Claim: "c3", To: "r3", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 99},
			// h2 has not added its part: refused until it has.
			{At: 2 * time.Hour, Op: Admit, Claim: "d1", To: "r4", Host: "h2", WantErr: limits.ErrRebuild},
			{At: 2 * time.Hour, Op: Rebuild, Part: &Part{Host: "h2", Skew: -time.Minute,
				Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 3}, {Account: "b", Day: Today, Used: 2}},
				Window:   []PartContact{{To: "r2", Account: "b", At: 100 * time.Minute}, {To: "r1", Account: "b", At: 30 * time.Minute}},
				Guards:   []PartGuard{{To: "r1", Guard: "t:promo", At: 30 * time.Minute}, {To: "r2", Guard: "t:promo", At: 100 * time.Minute}},
			}, WantRebuild: &limits.RebuildResult{Added: map[string]int{"a": 3, "b": 2}}},
			{At: 2 * time.Hour, Op: Check, WantUsedEach: []int{8, 2}, WantTokensEach: []float64{99, 100},
				WantReach: &ReachWant{Used: 3, Oldest: 90 * time.Minute}},
			// The guards hold against the other host, on the gate's clock.
			{At: 2 * time.Hour, Op: Admit, Claim: "d1", To: "r1", Guard: "t:promo", Host: "h2", WantReason: limits.ReasonElsewhere, WantUntil: 24*time.Hour + 90*time.Minute},
			{At: 3 * time.Hour, Op: Admit, Claim: "c4", To: "r2", Guard: "t:promo", Host: "h1", WantReason: limits.ReasonElsewhere, WantUntil: 24*time.Hour + 100*time.Minute},
			// The caps count every host's part: a has 2 left, b 8.
			{At: 3 * time.Hour, Op: Admit, Claim: "d2", To: "r5", Host: "h2", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 10)},
				WantOK: true, WantAccount: "a", WantUsed: 9, WantTokens: 99},
			{At: 3 * time.Hour, Op: Admit, Claim: "d3", To: "r6", Host: "h2", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 10)},
				Reach: &ratelimit.Reach{}, WantOK: true, WantAccount: "a", WantUsed: 10, WantTokens: 98},
			{At: 3 * time.Hour, Op: Admit, Claim: "d4", To: "r7", Host: "h2", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 10)},
				Reach: &ratelimit.Reach{}, WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			// A host that never returns, added by hand.
			{At: 3 * time.Hour, Op: Rebuild, Part: &Part{Host: "hand:h3", Accounts: []limits.RebuildCount{{Account: "b", Day: Today, Used: 5}}},
				WantRebuild: &limits.RebuildResult{Added: map[string]int{"b": 5}}},
			{At: 3 * time.Hour, Op: Check, WantUsedEach: []int{10, 7}, WantTokensEach: []float64{98, 100}},
			// A new quota day for b: it is no longer on the rebuilt day.
			{At: 3 * time.Hour, Op: Reset, Force: true, Resets: []string{"b"}, WantDay: []string{Today + "#2"}, WantBefore: []int{7}, WantReset: []bool{true}},
			{At: 3 * time.Hour, Op: Rebuild, Part: &Part{Host: "h2", Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 3}, {Account: "b", Day: Today, Used: 2}}},
				WantRebuild: &limits.RebuildResult{Already: true, OnRebuiltDay: map[string]bool{"a": true, "b": false}}},
			// A forced reset starts a living state: no part is taken then.
			{At: 4 * time.Hour, Op: Lose},
			{At: 4 * time.Hour, Op: Reset, Force: true, WantDay: []string{Today + "#1", Today + "#1"}, WantBefore: []int{0, 0}, WantReset: []bool{true, true}},
			{At: 4 * time.Hour, Op: Admit, Claim: "e1", To: "r1", Host: "h2", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 4 * time.Hour, Op: Rebuild, Part: &Part{Host: "h1", Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 4}}}, WantErr: limits.ErrNotLost},
		},
	},
	{
		Name:     "a rebuild of nothing (a Redis never used) is a fresh start: on it again, the day is not kept",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 10)},
		Fresh:    true,
		Steps: []Step{
			{At: 0, Op: Rebuild, Part: &Part{Host: "h1", Accounts: []limits.RebuildCount{{Account: "a", Day: Today}}},
				WantRebuild: &limits.RebuildResult{Started: true, Added: map[string]int{}}},
			{At: 0, Op: Admit, Claim: "c1", To: "r1", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Rebuild, Part: &Part{Host: "h1", Accounts: []limits.RebuildCount{{Account: "a", Day: Today, Used: 1}}},
				WantRebuild: &limits.RebuildResult{Already: true, OnRebuiltDay: map[string]bool{"a": false}}},
		},
	},
}
