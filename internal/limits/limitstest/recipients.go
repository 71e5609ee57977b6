package limitstest

import (
	"math"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// RecipientTables are the steps of the recipient's rules: the portfolio's
// reach, the pair gap, the sticky sender, and what refunds and repeats do
// to them.
var RecipientTables = []Table{
	{
		Name:     "reach: the window fills, a known recipient goes free, a new one waits for the oldest to leave",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
		Reach:    ratelimit.Reach{Limit: 3},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: time.Minute, Op: Admit, Claim: "c2", To: "r2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 99},
			{At: 2 * time.Minute, Op: Admit, Claim: "c3", To: "r3", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 99},
			{At: 3 * time.Minute, Op: Admit, Claim: "c4", To: "r4", WantReason: limits.ReasonReach, WantUntil: 24 * time.Hour},
			{At: 3 * time.Minute, Op: Check, WantUsedEach: []int{3}, WantTokensEach: []float64{100}, WantReach: &ReachWant{Used: 3, Oldest: 0}},
			// r1 is in the window: free, and their latest admission moves.
			{At: 4 * time.Minute, Op: Admit, Claim: "c5", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 99},
			{At: 4 * time.Minute, Op: Check, WantReach: &ReachWant{Used: 3, Oldest: time.Minute}},
			{At: 5 * time.Minute, Op: Admit, Claim: "c4", To: "r4", WantReason: limits.ReasonReach, WantUntil: 24*time.Hour + time.Minute},
			// 24 h after r2's admission r2 leaves (the window is open at its start).
			{At: 24*time.Hour + time.Minute, Op: Admit, Claim: "c4", To: "r4", WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 99},
			{At: 24*time.Hour + time.Minute, Op: Check, WantReach: &ReachWant{Used: 3, Oldest: 2 * time.Minute}},
			{At: 24*time.Hour + time.Minute, Op: Admit, Claim: "c6", To: "r2", WantReason: limits.ReasonReach, WantUntil: 24*time.Hour + 2*time.Minute},
			{At: 48*time.Hour + 2*time.Minute, Op: Check, WantReach: &ReachWant{Used: 0, Oldest: Never}},
		},
	},
	{
		Name:     "reach: the margin keeps some back, rounded up; no limit still counts the window",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
		Reach:    ratelimit.Reach{Limit: 4, Margin: 0.3}, // 1.2 kept back, rounded up: 2 allowed
		Steps: []Step{
			// A margin that leaves nothing: an empty window waits a whole window.
			{At: 0, Op: Admit, Claim: "c0", To: "r9", Reach: &ratelimit.Reach{Limit: 1, Margin: 0.5}, WantReason: limits.ReasonReach, WantUntil: 24 * time.Hour},
			{At: time.Hour, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: time.Hour, Op: Admit, Claim: "c2", To: "r2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 98},
			{At: time.Hour, Op: Admit, Claim: "c3", To: "r3", WantReason: limits.ReasonReach, WantUntil: 25 * time.Hour},
			{At: time.Hour, Op: Admit, Claim: "c3", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 97},
			{At: time.Hour, Op: Check, WantReach: &ReachWant{Used: 2, Oldest: time.Hour}},
			{At: time.Hour, Op: Admit, Claim: "c4", To: "r3", Reach: &ratelimit.Reach{}, WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 96},
			{At: time.Hour, Op: Check, WantReach: &ReachWant{Used: 3, Oldest: time.Hour}},
			{At: time.Hour, Op: Admit, Claim: "c5", To: "r5", WantReason: limits.ReasonReach, WantUntil: 25 * time.Hour},
		},
	},
	{
		Name: "reach: the window is the portfolio's, whichever number sends",
		Accounts: []limits.Account{
			acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 1000),
			acct("b", ratelimit.Limit{Rate: 1, Burst: 100}, 1000),
		},
		Reach: ratelimit.Reach{Limit: 2},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "c2", To: "r2", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "c3", To: "r3", Accounts: []limits.Account{acct("b", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
				WantReason: limits.ReasonReach, WantUntil: 24 * time.Hour},
			{At: 0, Op: Admit, Claim: "c4", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 98},
			{At: 0, Op: Admit, Claim: "c5", To: "r2", Accounts: []limits.Account{acct("b", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
				WantOK: true, WantAccount: "b", WantUsed: 2, WantTokens: 98},
			{At: 0, Op: Check, WantUsedEach: []int{2, 2}, WantTokensEach: []float64{98, 98}, WantReach: &ReachWant{Used: 2, Oldest: 0}},
		},
	},
	{
		Name:     "pair gap: a recipient messaged within it waits until it ends; a refund takes the message back",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
		PairGap:  10 * time.Minute,
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 5 * time.Minute, Op: Admit, Claim: "c2", To: "r1", WantReason: limits.ReasonPair, WantUntil: 10 * time.Minute},
			{At: 5 * time.Minute, Op: Admit, Claim: "c3", To: "r2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 99},
			{At: 5 * time.Minute, Op: Check, WantUsedEach: []int{2}, WantTokensEach: []float64{99}},
			{At: 10 * time.Minute, Op: Admit, Claim: "c2", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 99},
			{At: 15 * time.Minute, Op: Admit, Claim: "c4", To: "r1", WantReason: limits.ReasonPair, WantUntil: 20 * time.Minute},
			{At: 15 * time.Minute, Op: Refund, Claim: "c2", WantRefund: limits.Refunded},
			{At: 15 * time.Minute, Op: Admit, Claim: "c4", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 99},
			{At: 15 * time.Minute, Op: Refund, Claim: "c2", WantRefund: limits.AlreadyRefunded},
			{At: 15 * time.Minute, Op: Admit, Claim: "c5", To: "r1", WantReason: limits.ReasonPair, WantUntil: 25 * time.Minute},
		},
	},
	{
		Name: "sticky: a recipient goes only from the number that messaged them, or breaks when it is not offered",
		Accounts: []limits.Account{
			acct("a", ratelimit.Limit{Rate: 1, Burst: 2}, 100),
			acct("b", ratelimit.Limit{Rate: 1, Burst: 10}, 100),
		},
		Sticky: 30 * 24 * time.Hour,
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 1},
			{At: 0, Op: Admit, Claim: "c2", To: "r2", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 9},
			// b is fuller, but r1 is a's.
			{At: 0, Op: Admit, Claim: "c3", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 0, WantSticky: "a"},
			{At: 0, Op: Admit, Claim: "c4", To: "r1", WantReason: ratelimit.ReasonTokens, WantUntil: time.Second},
			{At: time.Second, Op: Admit, Claim: "c4", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 0, WantSticky: "a"},
			// a not offered (disabled, say): b sends, and the break is reported.
			{At: time.Second, Op: Admit, Claim: "c5", To: "r1", Accounts: []limits.Account{acct("b", ratelimit.Limit{Rate: 1, Burst: 10}, 100)},
				WantOK: true, WantAccount: "b", WantUsed: 2, WantTokens: 9, WantSticky: "a", WantBroken: true},
			{At: time.Second, Op: Admit, Claim: "c6", To: "r1", WantOK: true, WantAccount: "b", WantUsed: 3, WantTokens: 8, WantSticky: "b"},
			{At: time.Second, Op: Admit, Claim: "c7", To: "r2", WantOK: true, WantAccount: "b", WantUsed: 4, WantTokens: 7, WantSticky: "b"},
			// Its number at its cap: the recipient waits for a reset, though a could send.
			{At: 2 * time.Second, Op: Admit, Claim: "c8", To: "r1", Accounts: []limits.Account{
				acct("a", ratelimit.Limit{Rate: 1, Burst: 2}, 100), acct("b", ratelimit.Limit{Rate: 1, Burst: 10}, 4),
			}, WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			{At: 2 * time.Second, Op: Admit, Claim: "c8", To: "r3", WantOK: true, WantAccount: "b", WantUsed: 5, WantTokens: 7},
			// Thirty days later the stickiness is over.
			{At: 30*24*time.Hour + 2*time.Second, Op: Admit, Claim: "c9", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 1},
		},
	},
	{
		Name:     "refunds take a recipient back out of the window, once, unless a later admission replaced theirs",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 100)},
		Reach:    ratelimit.Reach{Limit: 2},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "c2", To: "r2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 98},
			{At: 0, Op: Admit, Claim: "c3", To: "r3", WantReason: limits.ReasonReach, WantUntil: 24 * time.Hour},
			{At: time.Minute, Op: Refund, Claim: "c2", WantRefund: limits.Refunded},
			{At: time.Minute, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{100}, WantReach: &ReachWant{Used: 1, Oldest: 0}},
			{At: time.Minute, Op: Refund, Claim: "c2", WantRefund: limits.AlreadyRefunded},
			{At: time.Minute, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{100}, WantReach: &ReachWant{Used: 1, Oldest: 0}},
			{At: time.Minute, Op: Admit, Claim: "c3", To: "r3", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 99},
			// A free re-send refunded: r1 goes back to its admission before.
			{At: 2 * time.Minute, Op: Admit, Claim: "c4", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 99},
			{At: 2 * time.Minute, Op: Check, WantReach: &ReachWant{Used: 2, Oldest: time.Minute}},
			{At: 3 * time.Minute, Op: Refund, Claim: "c4", WantRefund: limits.Refunded},
			{At: 3 * time.Minute, Op: Check, WantReach: &ReachWant{Used: 2, Oldest: 0}},
			{At: 3 * time.Minute, Op: Refund, Claim: "c1", WantRefund: limits.Refunded},
			{At: 3 * time.Minute, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{100}, WantReach: &ReachWant{Used: 1, Oldest: time.Minute}},
			{At: 3 * time.Minute, Op: Refund, Claim: "c1", WantRefund: limits.AlreadyRefunded},
			{At: 3 * time.Minute, Op: Check, WantReach: &ReachWant{Used: 1, Oldest: time.Minute}},
			// A refund of an admission a later one replaced takes nothing.
			{At: 4 * time.Minute, Op: Admit, Claim: "c5", To: "r5", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 99},
			{At: 5 * time.Minute, Op: Admit, Claim: "c6", To: "r5", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 99},
			{At: 5 * time.Minute, Op: Refund, Claim: "c5", WantRefund: limits.Refunded},
			{At: 5 * time.Minute, Op: Check, WantUsedEach: []int{2}, WantTokensEach: []float64{99}, WantReach: &ReachWant{Used: 2, Oldest: time.Minute}},
			{At: 5 * time.Minute, Op: Admit, Claim: "c7", To: "r6", WantReason: limits.ReasonReach, WantUntil: 24*time.Hour + time.Minute},
		},
	},
	{
		Name:     "repeat guard: another host's claim skips the recipient until it ends or its admission is refunded; the holder's own go",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 1000)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", Guard: "t:promo", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "c2", To: "r1", Guard: "t:promo", Host: "h2", WantReason: limits.ReasonElsewhere, WantUntil: 24 * time.Hour},
			// Another message, another recipient, or no guard: not this claim's.
			{At: 0, Op: Admit, Claim: "c3", To: "r1", Guard: "t:other", Host: "h2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 98},
			{At: 0, Op: Admit, Claim: "c3b", To: "r2", Guard: "t:promo", Host: "h2", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 97},
			{At: 0, Op: Admit, Claim: "c3c", To: "r1", Host: "h2", WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 96},
			// The holder's own next attempt goes, and holds the guard from then.
			{At: time.Minute, Op: Admit, Claim: "c4", To: "r1", Guard: "t:promo", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 99},
			{At: time.Minute, Op: Admit, Claim: "c2", To: "r1", Guard: "t:promo", Host: "h2", WantReason: limits.ReasonElsewhere, WantUntil: 24*time.Hour + time.Minute},
			// A refund of an admission that no longer holds it lets nothing go.
			{At: 2 * time.Minute, Op: Refund, Claim: "c1", WantRefund: limits.Refunded},
			{At: 2 * time.Minute, Op: Admit, Claim: "c2", To: "r1", Guard: "t:promo", Host: "h2", WantReason: limits.ReasonElsewhere, WantUntil: 24*time.Hour + time.Minute},
			// Its holder's refund (never accepted) does: the other host may send.
			{At: 2 * time.Minute, Op: Refund, Claim: "c4", WantRefund: limits.Refunded},
			{At: 2 * time.Minute, Op: Admit, Claim: "c2", To: "r1", Guard: "t:promo", Host: "h2", WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 99},
			{At: 3 * time.Minute, Op: Admit, Claim: "c5", To: "r1", Guard: "t:promo", Host: "h1", WantReason: limits.ReasonElsewhere, WantUntil: 24*time.Hour + 2*time.Minute},
			// A host that never returns holds it for the window, no longer.
			{At: 24*time.Hour + 2*time.Minute, Op: Admit, Claim: "c5", To: "r1", Guard: "t:promo", Host: "h1", WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 99},
			{At: 24*time.Hour + 3*time.Minute, Op: Admit, Claim: "c6", To: "r1", Guard: "t:promo", Host: "h2", WantReason: limits.ReasonElsewhere, WantUntil: 48*time.Hour + 2*time.Minute},
			// A guard needs its host and a recipient.
			{At: 24*time.Hour + 3*time.Minute, Op: Admit, Claim: "c7", To: "r3", Guard: "t:promo", WantAny: true},
			{At: 24*time.Hour + 3*time.Minute, Op: Admit, Claim: "c7", Guard: "t:promo", Host: "h1", WantAny: true},
		},
	},
	{
		Name:     "a repeated claim changes nothing: no pair gap, no reach, no second count",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 100)},
		Reach:    ratelimit.Reach{Limit: 1},
		PairGap:  time.Hour,
		Sticky:   2 * time.Hour,
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantReplayed: true},
			{At: time.Minute, Op: Admit, Claim: "c1", To: "r1", WantOK: true, WantAccount: "a", WantReplayed: true},
			{At: time.Minute, Op: Admit, Claim: "c1", To: "r2", WantOK: true, WantAccount: "a", WantReplayed: true},
			{At: time.Minute, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{100}, WantReach: &ReachWant{Used: 1, Oldest: 0}},
			{At: time.Minute, Op: Admit, Claim: "c2", To: "r2", WantReason: limits.ReasonReach, WantUntil: 24 * time.Hour},
			{At: time.Minute, Op: Admit, Claim: "c2", To: "r1", WantReason: limits.ReasonPair, WantUntil: time.Hour},
			{At: time.Hour, Op: Admit, Claim: "c2", To: "r1", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 99, WantSticky: "a"},
		},
	},
	{
		Name:     "bad recipient requests are refused before anything is spent",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3)},
		Reach:    ratelimit.Reach{Limit: 5},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", To: "+1\t555", WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", To: "r1", Reach: &ratelimit.Reach{Limit: 5, Margin: math.NaN()}, WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", To: "r1", Reach: &ratelimit.Reach{Limit: 5, Margin: -0.1}, WantAny: true},
			{At: 0, Op: Check, WantUsedEach: []int{0}, WantTokensEach: []float64{3}, WantReach: &ReachWant{Used: 0, Oldest: Never}},
		},
	},
}
