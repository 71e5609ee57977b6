// Package limitstest is the conformance suite of the limits gate: one set of
// step tables that every implementation runs (the reference model in
// package limits, Redis in package redisgate). Imported by tests only.
package limitstest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// T0 is the first named instant of every table; steps are offsets from it.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Today is T0's calendar day.
const Today = "2026-03-02"

// Harness is one fresh, empty gate (no state: as a Redis never used) whose
// clock the steps set.
type Harness interface {
	Gate() limits.Gate
	// SetNow sets the gate's clock.
	SetNow(t time.Time)
	// LoseState drops all shared state, as a Redis restarted without
	// persistence does.
	LoseState()
}

// NewHarness returns a fresh harness for one table, its clock at T0.
type NewHarness func(t *testing.T) Harness

// Op is what a step does.
type Op int

const (
	Admit Op = iota + 1
	Refund
	Reset
	Lose
	Check // State
	Rebuild
)

// Never marks a refusal whose Until is the zero time.
const Never = time.Duration(-1)

// Step is one call at a named instant and what it must answer.
type Step struct {
	At time.Duration // offset from T0; non-decreasing within a table
	Op Op

	Claim    string           // Admit, Refund: the claim id
	Accounts []limits.Account // Admit: nil means the table's accounts
	Global   *ratelimit.Limit // Admit: nil means the table's global limit
	NoGlobal bool             // Admit: the global bucket off for this step
	To       string           // Admit: the recipient
	Reach    *ratelimit.Reach // Admit: nil means the table's reach
	Guard    string           // Admit: the repeat guard
	Host     string           // Admit: the asking host

	Today  string   // Reset: the calendar day; empty means Today
	Force  bool     // Reset
	Resets []string // Reset: the accounts; nil means the table's

	// Admit answers.
	WantOK       bool
	WantAccount  string
	WantUsed     int
	WantTokens   float64
	WantReplayed bool
	WantReason   ratelimit.Reason
	WantUntil    time.Duration // offset from T0, or Never
	WantSticky   string        // the account the recipient is stuck to
	WantBroken   bool          // and it was not offered

	WantRefund limits.RefundResult // Refund
	// ByID: the Refund names the claim by its id alone (a lapsed claim's).
	ByID bool

	// Rebuild: a host's part, its instants as offsets from T0 on a host
	// clock Skew ahead of the gate's; and what it must answer.
	Part        *Part
	WantRebuild *limits.RebuildResult

	WantDay    []string // Reset: each account's day after; Check: each account's day
	WantBefore []int    // Reset: each account's count before
	WantReset  []bool   // Reset
	WantBehind bool     // Reset: every account's Behind

	WantUsedEach   []int      // Check: each of the table's accounts (nil: not checked)
	WantTokensEach []float64  // Check
	WantReach      *ReachWant // Check: the portfolio's window (nil: not checked)

	WantErr error // errors.Is; the step must fail with it
	WantAny bool  // the step must fail (validation), whatever the error
}

// Part is a host's part of a lost day (limits.RebuildRequest), its
// instants offsets from T0 on its own clock.
type Part struct {
	Host     string
	Skew     time.Duration // the host's clock minus the gate's
	Accounts []limits.RebuildCount
	Window   []PartContact
	Guards   []PartGuard
}

// PartContact is a recipient's latest message in a Part.
type PartContact struct {
	To, Account string
	At          time.Duration
}

// PartGuard is a repeat guard a Part's message holds.
type PartGuard struct {
	To, Guard string
	At        time.Duration
}

// ReachWant is the window a Check step wants: distinct recipients in it and
// the oldest of their latest admissions (an offset from T0, or Never for
// an empty window).
type ReachWant struct {
	Used   int
	Oldest time.Duration
}

// Table is one scenario.
type Table struct {
	Name     string
	Accounts []limits.Account
	Global   *ratelimit.Limit
	// The recipient's rules of every admission.
	Reach   ratelimit.Reach
	PairGap time.Duration
	Sticky  time.Duration
	// Fresh skips the forced reset that starts every other table's state.
	Fresh bool
	Steps []Step
}

func acct(name string, l ratelimit.Limit, cap int) limits.Account {
	return limits.Account{Name: name, Limit: l, DailyCap: cap}
}

func lim(rate float64, burst int) *ratelimit.Limit { return &ratelimit.Limit{Rate: rate, Burst: burst} }

const tokenTolerance = 1e-9

// Tables are the steps every gate must take alike.
var Tables = []Table{
	{
		Name:     "bucket drains its burst then refills at its rate",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 100)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 2},
			{At: 0, Op: Admit, Claim: "c2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 1},
			{At: 0, Op: Admit, Claim: "c3", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 0},
			{At: 0, Op: Admit, Claim: "c4", WantReason: ratelimit.ReasonTokens, WantUntil: time.Second},
			{At: 500 * time.Millisecond, Op: Admit, Claim: "c4", WantReason: ratelimit.ReasonTokens, WantUntil: time.Second},
			{At: 500 * time.Millisecond, Op: Check, WantUsedEach: []int{3}, WantTokensEach: []float64{0.5}},
			{At: time.Second, Op: Admit, Claim: "c4", WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 0},
			{At: 4 * time.Second, Op: Check, WantUsedEach: []int{4}, WantTokensEach: []float64{3}},
			{At: 4 * time.Second, Op: Admit, Claim: "c5", WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 2},
		},
	},
	{
		Name:     "new tier: one message per 12 s after a burst of 5",
		Accounts: []limits.Account{acct("fresh", ratelimit.Every(12*time.Second, 5), 50)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "fresh", WantUsed: 1, WantTokens: 4},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "fresh", WantUsed: 2, WantTokens: 3},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "fresh", WantUsed: 3, WantTokens: 2},
			{At: 0, Op: Admit, Claim: "4", WantOK: true, WantAccount: "fresh", WantUsed: 4, WantTokens: 1},
			{At: 0, Op: Admit, Claim: "5", WantOK: true, WantAccount: "fresh", WantUsed: 5, WantTokens: 0},
			{At: 3 * time.Second, Op: Admit, Claim: "6", WantReason: ratelimit.ReasonTokens, WantUntil: 12 * time.Second},
			{At: 12 * time.Second, Op: Admit, Claim: "6", WantOK: true, WantAccount: "fresh", WantUsed: 6, WantTokens: 0},
			{At: 23 * time.Second, Op: Admit, Claim: "7", WantReason: ratelimit.ReasonTokens, WantUntil: 24 * time.Second},
			{At: 24 * time.Second, Op: Admit, Claim: "7", WantOK: true, WantAccount: "fresh", WantUsed: 7, WantTokens: 0},
		},
	},
	{
		Name:     "daily cap: refused at the cap until a reset opens a new quota day",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 100, Burst: 100}, 3)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 98},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 97},
			{At: 0, Op: Admit, Claim: "4", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			{At: time.Hour, Op: Admit, Claim: "4", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			// A second reset on the same calendar day changes nothing...
			{At: time.Hour, Op: Reset, WantDay: []string{Today + "#1"}, WantBefore: []int{3}, WantReset: []bool{false}},
			{At: time.Hour, Op: Admit, Claim: "4", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			// ...unless forced: a new quota day with its own count.
			{At: time.Hour, Op: Reset, Force: true, WantDay: []string{Today + "#2"}, WantBefore: []int{3}, WantReset: []bool{true}},
			{At: time.Hour, Op: Admit, Claim: "4", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 99},
			{At: time.Hour, Op: Check, WantDay: []string{Today + "#2"}, WantUsedEach: []int{1}, WantTokensEach: []float64{99}},
		},
	},
	{
		Name:     "quota reset on the next calendar day, once",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 10}, 5), acct("b", ratelimit.Limit{Rate: 1, Burst: 10}, 5)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 8},
			{At: 15 * time.Hour, Op: Reset, Today: "2026-03-03", WantDay: []string{"2026-03-03#2", "2026-03-03#2"}, WantBefore: []int{2, 1}, WantReset: []bool{true, true}},
			{At: 15 * time.Hour, Op: Reset, Today: "2026-03-03", WantDay: []string{"2026-03-03#2", "2026-03-03#2"}, WantBefore: []int{0, 0}, WantReset: []bool{false, false}},
			{At: 15 * time.Hour, Op: Check, WantDay: []string{"2026-03-03#2", "2026-03-03#2"}, WantUsedEach: []int{0, 0}, WantTokensEach: []float64{10, 10}},
			{At: 15 * time.Hour, Op: Admit, Claim: "4", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			// A host whose clock or zone is behind never moves a day back:
			// plain, nothing happens; forced, a new quota day on the later date.
			{At: 15 * time.Hour, Op: Reset, Today: "2026-03-02", WantDay: []string{"2026-03-03#2", "2026-03-03#2"}, WantBefore: []int{1, 0}, WantReset: []bool{false, false}, WantBehind: true},
			{At: 15 * time.Hour, Op: Admit, Claim: "5", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 9},
			{At: 15 * time.Hour, Op: Reset, Today: "2026-03-02", Force: true, WantDay: []string{"2026-03-03#3", "2026-03-03#3"}, WantBefore: []int{1, 1}, WantReset: []bool{true, true}, WantBehind: true},
			{At: 15 * time.Hour, Op: Check, WantDay: []string{"2026-03-03#3", "2026-03-03#3"}, WantUsedEach: []int{0, 0}, WantTokensEach: []float64{9, 9}},
		},
	},
	{
		Name:     "reset of one account leaves the others",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 10}, 1), acct("b", ratelimit.Limit{Rate: 1, Burst: 10}, 1)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "3", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			{At: 0, Op: Reset, Force: true, Resets: []string{"b"}, WantDay: []string{Today + "#2"}, WantBefore: []int{1}, WantReset: []bool{true}},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 8},
			{At: 0, Op: Check, WantDay: []string{Today + "#1", Today + "#2"}, WantUsedEach: []int{1, 1}, WantTokensEach: []float64{9, 8}},
		},
	},
	{
		Name:     "an account seen first in an admission starts its quota day there",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 2}, 5), acct("late", ratelimit.Limit{Rate: 1, Burst: 2}, 5)},
		Fresh:    true,
		Steps: []Step{
			{At: 0, Op: Reset, Force: true, Resets: []string{"a"}, WantDay: []string{Today + "#1"}, WantBefore: []int{0}, WantReset: []bool{true}},
			{At: 0, Op: Reset, Force: true, Resets: []string{"a"}, WantDay: []string{Today + "#2"}, WantBefore: []int{0}, WantReset: []bool{true}},
			{At: 0, Op: Check, WantDay: []string{Today + "#2", ""}, WantUsedEach: []int{0, 0}, WantTokensEach: []float64{2, 2}},
			{At: 0, Op: Admit, Claim: "1", Accounts: []limits.Account{acct("late", ratelimit.Limit{Rate: 1, Burst: 2}, 5)}, WantOK: true, WantAccount: "late", WantUsed: 1, WantTokens: 1},
			{At: 0, Op: Check, WantDay: []string{Today + "#2", Today + "#1"}, WantUsedEach: []int{0, 1}, WantTokensEach: []float64{2, 1}},
		},
	},
	{
		Name:     "global bucket over every account",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 5}, 100), acct("b", ratelimit.Limit{Rate: 1, Burst: 5}, 100)},
		Global:   lim(0.5, 3),
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 4},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "b", WantUsed: 1, WantTokens: 4},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 3},
			{At: 0, Op: Admit, Claim: "4", WantReason: ratelimit.ReasonGlobal, WantUntil: 2 * time.Second},
			{At: time.Second, Op: Admit, Claim: "4", WantReason: ratelimit.ReasonGlobal, WantUntil: 2 * time.Second},
			{At: 2 * time.Second, Op: Admit, Claim: "4", WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 4},
			// Without the global bucket the accounts' own tokens decide.
			{At: 2 * time.Second, Op: Admit, Claim: "5", NoGlobal: true, WantOK: true, WantAccount: "b", WantUsed: 2, WantTokens: 4},
			{At: 2 * time.Second, Op: Check, WantUsedEach: []int{3, 2}, WantTokensEach: []float64{4, 4}},
			{At: 2 * time.Second, Op: Admit, Claim: "6", Global: lim(1, 0), WantReason: ratelimit.ReasonGlobal, WantUntil: Never},
		},
	},
	{
		Name: "the choice: fullest bucket, healthy before demoted, then the first",
		Accounts: []limits.Account{
			acct("small", ratelimit.Limit{Rate: 1, Burst: 5}, 100),
			acct("large", ratelimit.Limit{Rate: 1, Burst: 10}, 100),
		},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "small", WantUsed: 1, WantTokens: 4},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "large", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "3", WantOK: true, WantAccount: "large", WantUsed: 2, WantTokens: 8},
			{At: 0, Op: Admit, Claim: "4", WantOK: true, WantAccount: "small", WantUsed: 2, WantTokens: 3},
			{At: 0, Op: Admit, Claim: "5", Accounts: []limits.Account{
				{Name: "small", Limit: ratelimit.Limit{Rate: 1, Burst: 5}, DailyCap: 100},
				{Name: "large", Limit: ratelimit.Limit{Rate: 1, Burst: 10}, DailyCap: 100, Demoted: true},
			}, WantOK: true, WantAccount: "small", WantUsed: 3, WantTokens: 2},
			{At: 0, Op: Admit, Claim: "6", Accounts: []limits.Account{
				{Name: "small", Limit: ratelimit.Limit{Rate: 1, Burst: 5}, DailyCap: 3},
				{Name: "large", Limit: ratelimit.Limit{Rate: 1, Burst: 10}, DailyCap: 100, Demoted: true},
			}, WantOK: true, WantAccount: "large", WantUsed: 3, WantTokens: 7},
			// Capped and without tokens mixed: the wait is for the one with quota left.
			{At: 0, Op: Admit, Claim: "7", Accounts: []limits.Account{
				{Name: "small", Limit: ratelimit.Limit{Rate: 1, Burst: 5}, DailyCap: 3},
				{Name: "empty", Limit: ratelimit.Limit{Rate: 0.25, Burst: 0}, DailyCap: 100},
				{Name: "large", Limit: ratelimit.Limit{Rate: 0.5, Burst: 10}, DailyCap: 3},
			}, WantReason: ratelimit.ReasonCapped, WantUntil: Never},
		},
	},
	{
		Name:     "a changed rate keeps the tokens earned at the old one",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 2}, 100)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 1},
			{At: 0, Op: Admit, Claim: "2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 0},
			{At: 4 * time.Second, Op: Admit, Claim: "3", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.1, Burst: 2}, 100)},
				WantOK: true, WantAccount: "a", WantUsed: 3, WantTokens: 1},
			{At: 5 * time.Second, Op: Admit, Claim: "4", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.1, Burst: 2}, 100)},
				WantOK: true, WantAccount: "a", WantUsed: 4, WantTokens: 0.1},
			{At: 6 * time.Second, Op: Admit, Claim: "5", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.1, Burst: 2}, 100)},
				WantReason: ratelimit.ReasonTokens, WantUntil: 14 * time.Second},
			// A shrinking burst caps what was earned.
			{At: time.Hour, Op: Admit, Claim: "5", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.1, Burst: 1}, 100)},
				WantOK: true, WantAccount: "a", WantUsed: 5, WantTokens: 0},
		},
	},
	{
		Name:     "refunds give the cap back once; the token stays spent",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 10}, 2)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "c2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 8},
			{At: 0, Op: Admit, Claim: "c3", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			{At: 0, Op: Refund, Claim: "c1", WantRefund: limits.Refunded},
			{At: 0, Op: Refund, Claim: "c1", WantRefund: limits.AlreadyRefunded},
			{At: 0, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{8}},
			{At: 0, Op: Admit, Claim: "c3", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 7},
			{At: 0, Op: Admit, Claim: "c4", WantReason: ratelimit.ReasonCapped, WantUntil: Never},
			{At: 0, Op: Refund, Claim: "nobody", WantRefund: limits.UnknownClaim},
			// A refund of an earlier quota day counts in that day, not today's.
			{At: time.Hour, Op: Reset, Force: true, WantDay: []string{Today + "#2"}, WantBefore: []int{2}, WantReset: []bool{true}},
			{At: time.Hour, Op: Admit, Claim: "c5", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: time.Hour, Op: Refund, Claim: "c2", WantRefund: limits.Refunded},
			{At: time.Hour, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{9}},
			{At: time.Hour, Op: Refund, Claim: "c5", WantRefund: limits.Refunded},
			{At: time.Hour, Op: Check, WantUsedEach: []int{0}, WantTokensEach: []float64{9}},
		},
	},
	{
		Name:     "a refund by the claim's id alone gives back what it was admitted with",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 10}, 1)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", To: "+1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Check, WantReach: &ReachWant{Used: 1, Oldest: 0}},
			// In the quota day that counted it, whatever day is current.
			{At: time.Hour, Op: Reset, Force: true, WantDay: []string{Today + "#2"}, WantBefore: []int{1}, WantReset: []bool{true}},
			{At: time.Hour, Op: Admit, Claim: "c2", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: time.Hour, Op: Refund, Claim: "c1", ByID: true, WantRefund: limits.Refunded},
			{At: time.Hour, Op: Refund, Claim: "c1", ByID: true, WantRefund: limits.AlreadyRefunded},
			{At: time.Hour, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{9}, WantReach: &ReachWant{Used: 0, Oldest: Never}},
			{At: time.Hour, Op: Refund, Claim: "c2", ByID: true, WantRefund: limits.Refunded},
			{At: time.Hour, Op: Check, WantUsedEach: []int{0}, WantTokensEach: []float64{9}},
			{At: time.Hour, Op: Refund, Claim: "nobody", ByID: true, WantRefund: limits.UnknownClaim},
		},
	},
	{
		Name:     "the same claim admitted twice counts once",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 10}, 5)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 9},
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantReplayed: true},
			{At: 0, Op: Check, WantUsedEach: []int{1}, WantTokensEach: []float64{9}},
			{At: 0, Op: Refund, Claim: "c1", WantRefund: limits.Refunded},
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantReplayed: true},
			{At: 0, Op: Check, WantUsedEach: []int{0}, WantTokensEach: []float64{9}},
		},
	},
	{
		Name:     "lost state admits nothing until a forced reset",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 2},
			{At: 0, Op: Admit, Claim: "c2", WantOK: true, WantAccount: "a", WantUsed: 2, WantTokens: 1},
			{At: 0, Op: Lose},
			{At: 0, Op: Admit, Claim: "c3", WantErr: limits.ErrStateLost},
			{At: time.Minute, Op: Admit, Claim: "c3", WantErr: limits.ErrStateLost},
			{At: time.Minute, Op: Refund, Claim: "c1", WantRefund: limits.UnknownClaim},
			{At: time.Minute, Op: Reset, WantErr: limits.ErrStateLost},
			{At: time.Minute, Op: Admit, Claim: "c3", WantErr: limits.ErrStateLost},
			{At: time.Minute, Op: Reset, Force: true, WantDay: []string{Today + "#1"}, WantBefore: []int{0}, WantReset: []bool{true}},
			{At: time.Minute, Op: Admit, Claim: "c3", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 2},
		},
	},
	{
		Name:     "a gate never started admits nothing",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3)},
		Fresh:    true,
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "c1", WantErr: limits.ErrStateLost},
			{At: 0, Op: Reset, WantErr: limits.ErrStateLost},
			{At: 0, Op: Reset, Force: true, WantDay: []string{Today + "#1"}, WantBefore: []int{0}, WantReset: []bool{true}},
			{At: 0, Op: Admit, Claim: "c1", WantOK: true, WantAccount: "a", WantUsed: 1, WantTokens: 2},
		},
	},
	{
		Name:     "bad requests are refused before anything is spent",
		Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3)},
		Steps: []Step{
			{At: 0, Op: Admit, Claim: "", WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", Accounts: []limits.Account{}, WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", Accounts: []limits.Account{acct("a{x}", ratelimit.Limit{Rate: 1, Burst: 3}, 3)}, WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3), acct("a", ratelimit.Limit{Rate: 1, Burst: 3}, 3)}, WantAny: true},
			{At: 0, Op: Admit, Claim: "c1", Accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: -1, Burst: 3}, 3)}, WantAny: true},
			{At: 0, Op: Reset, Today: "2 March", WantAny: true},
			{At: 0, Op: Check, WantUsedEach: []int{0}, WantTokensEach: []float64{3}},
		},
	},
}

// Run runs every table, then the concurrency checks, against fresh harnesses.
func Run(t *testing.T, newHarness NewHarness) {
	tables := append(Tables[:len(Tables):len(Tables)], RecipientTables...)
	for _, tt := range append(tables, RebuildTables...) {
		t.Run(tt.Name, func(t *testing.T) {
			RunTable(t, newHarness(t), tt)
		})
	}
	t.Run("concurrent admissions", func(t *testing.T) { RunConcurrent(t, newHarness) })
}

// RunTable takes one table's steps on h.
func RunTable(t *testing.T, h Harness, tt Table) {
	t.Helper()
	ctx := context.Background()
	g := h.Gate()
	h.SetNow(T0)
	names := make([]string, len(tt.Accounts))
	for i, a := range tt.Accounts {
		names[i] = a.Name
	}
	if !tt.Fresh {
		if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: names, Today: Today, Force: true}); err != nil {
			t.Fatalf("starting the state: %v", err)
		}
	}
	admitted := map[string]limits.Claim{}
	for i, s := range tt.Steps {
		h.SetNow(T0.Add(s.At))
		where := fmt.Sprintf("step %d (+%v)", i, s.At)
		switch s.Op {
		case Admit:
			r := limits.Request{ClaimID: s.Claim, Accounts: tt.Accounts, Global: tt.Global, Today: Today,
				Recipient: s.To, Reach: tt.Reach, PairGap: tt.PairGap, Sticky: tt.Sticky, Guard: s.Guard, Host: s.Host}
			if s.Reach != nil {
				r.Reach = *s.Reach
			}
			if s.Accounts != nil {
				r.Accounts = s.Accounts
			}
			if s.Global != nil {
				r.Global = s.Global
			}
			if s.NoGlobal {
				r.Global = nil
			}
			a, err := g.Admit(ctx, r)
			if !checkErr(t, where+" admit "+s.Claim, err, s) {
				continue
			}
			if a.OK != s.WantOK || a.Replayed != s.WantReplayed {
				t.Fatalf("%s: admit %s = %+v, want ok %v replayed %v", where, s.Claim, a, s.WantOK, s.WantReplayed)
			}
			if a.OK {
				if a.Claim.Account != s.WantAccount || a.Index < 0 || r.Accounts[a.Index].Name != s.WantAccount {
					t.Fatalf("%s: admit %s went to %s (index %d), want %s", where, s.Claim, a.Claim.Account, a.Index, s.WantAccount)
				}
				admitted[s.Claim] = a.Claim
				if a.Replayed {
					continue
				}
				if a.Used != s.WantUsed || math.Abs(a.Tokens-s.WantTokens) > tokenTolerance {
					t.Fatalf("%s: admit %s: used %d tokens %v, want used %d tokens %v", where, s.Claim, a.Used, a.Tokens, s.WantUsed, s.WantTokens)
				}
				if !a.At.Equal(T0.Add(s.At)) {
					t.Fatalf("%s: admit %s at %v, want the gate's clock %v", where, s.Claim, a.At, T0.Add(s.At))
				}
				if a.StickyAccount != s.WantSticky || a.StickyBroken != s.WantBroken {
					t.Fatalf("%s: admit %s: stuck to %q broken %v, want %q broken %v", where, s.Claim, a.StickyAccount, a.StickyBroken, s.WantSticky, s.WantBroken)
				}
				continue
			}
			if a.Reason != s.WantReason {
				t.Fatalf("%s: admit %s refused for %q, want %q", where, s.Claim, a.Reason, s.WantReason)
			}
			checkUntil(t, where, a.Until, s.WantUntil)
		case Refund:
			c, ok := admitted[s.Claim]
			if !ok {
				c = limits.Claim{ID: s.Claim, Account: tt.Accounts[0].Name, Day: Today + "#1"}
			}
			if s.ByID {
				c = limits.Claim{ID: s.Claim}
			}
			res, err := g.Refund(ctx, c)
			if !checkErr(t, where+" refund "+s.Claim, err, s) {
				continue
			}
			if res != s.WantRefund {
				t.Fatalf("%s: refund %s = %v, want %v", where, s.Claim, res, s.WantRefund)
			}
		case Reset:
			r := limits.ResetRequest{Accounts: names, Today: Today, Force: s.Force}
			if s.Today != "" {
				r.Today = s.Today
			}
			if s.Resets != nil {
				r.Accounts = s.Resets
			}
			rs, err := g.ResetQuota(ctx, r)
			if !checkErr(t, where+" reset", err, s) {
				continue
			}
			if len(rs) != len(r.Accounts) {
				t.Fatalf("%s: reset answered %d accounts, want %d", where, len(rs), len(r.Accounts))
			}
			for j, x := range rs {
				if x.Account != r.Accounts[j] || x.Day != s.WantDay[j] || x.Before != s.WantBefore[j] || x.Reset != s.WantReset[j] || x.Behind != s.WantBehind {
					t.Fatalf("%s: reset %d = %+v, want %s day %s before %d reset %v", where, j, x, r.Accounts[j], s.WantDay[j], s.WantBefore[j], s.WantReset[j])
				}
			}
		case Lose:
			h.LoseState()
		case Rebuild:
			p := s.Part
			r := limits.RebuildRequest{Host: p.Host, Today: Today, Now: T0.Add(s.At + p.Skew), Accounts: p.Accounts}
			for _, c := range p.Window {
				r.Window = append(r.Window, limits.RebuildContact{Recipient: c.To, Account: c.Account, At: T0.Add(c.At + p.Skew)})
			}
			for _, g := range p.Guards {
				r.Guards = append(r.Guards, limits.RebuildGuard{Recipient: g.To, Guard: g.Guard, At: T0.Add(g.At + p.Skew)})
			}
			res, err := g.Rebuild(ctx, r)
			if !checkErr(t, where+" rebuild", err, s) {
				continue
			}
			if w := s.WantRebuild; res.Started != w.Started || res.Already != w.Already || fmt.Sprint(res.Added) != fmt.Sprint(w.Added) ||
				(w.Already && fmt.Sprint(res.OnRebuiltDay) != fmt.Sprint(w.OnRebuiltDay)) {
				t.Fatalf("%s: rebuild by %s = %+v, want %+v", where, p.Host, res, *w)
			}
		case Check:
			st, err := g.State(ctx, tt.Accounts, tt.Global)
			if err != nil {
				t.Fatalf("%s: state: %v", where, err)
			}
			if w := s.WantReach; w != nil {
				oldest := st.Reach.Oldest
				if st.Reach.Used != w.Used || (w.Oldest == Never) != oldest.IsZero() || (w.Oldest != Never && !oldest.Equal(T0.Add(w.Oldest))) {
					t.Fatalf("%s: reach %d recipients, oldest %v; want %d, oldest +%v", where, st.Reach.Used, oldest, w.Used, w.Oldest)
				}
				if w.Oldest != Never && !st.Reach.FreesAt().Equal(T0.Add(w.Oldest+ratelimit.ReachWindow)) {
					t.Fatalf("%s: reach frees at %v, want 24 h after the oldest", where, st.Reach.FreesAt())
				}
			}
			for j, as := range st.Accounts {
				if s.WantUsedEach == nil {
					break
				}
				if as.Used != s.WantUsedEach[j] || math.Abs(as.Tokens-s.WantTokensEach[j]) > tokenTolerance {
					t.Fatalf("%s: state of %s = %+v, want used %d tokens %v", where, as.Name, as, s.WantUsedEach[j], s.WantTokensEach[j])
				}
				if s.WantDay != nil && as.Day != s.WantDay[j] {
					t.Fatalf("%s: state of %s: day %q, want %q", where, as.Name, as.Day, s.WantDay[j])
				}
			}
		default:
			t.Fatalf("%s: unknown op %d", where, s.Op)
		}
	}
}

// checkErr reports whether the step's call succeeded, failing the test when
// that is not what the step wants.
func checkErr(t *testing.T, where string, err error, s Step) bool {
	t.Helper()
	switch {
	case s.WantErr != nil:
		if !errors.Is(err, s.WantErr) {
			t.Fatalf("%s: error %v, want %v", where, err, s.WantErr)
		}
		return false
	case s.WantAny:
		if err == nil {
			t.Fatalf("%s: succeeded, want an error", where)
		}
		return false
	case err != nil:
		t.Fatalf("%s: %v", where, err)
	}
	return true
}

// checkUntil allows the Redis gate's microseconds: it rounds a wait up to
// the microsecond where the reference rounds to the nanosecond, so a wait
// the float arithmetic makes a nanosecond longer is a microsecond longer.
func checkUntil(t *testing.T, where string, got time.Time, want time.Duration) {
	t.Helper()
	if want == Never {
		if !got.IsZero() {
			t.Fatalf("%s: until %v, want never", where, got)
		}
		return
	}
	if d := got.Sub(T0.Add(want)); d < 0 || d > time.Microsecond {
		t.Fatalf("%s: until +%v, want +%v", where, got.Sub(T0), want)
	}
}

// RunConcurrent has N goroutines admit at once, at one instant, and checks
// that exactly the limit is admitted, whichever limit binds.
func RunConcurrent(t *testing.T, newHarness NewHarness) {
	const goroutines, each = 16, 12
	cases := []struct {
		name     string
		accounts []limits.Account
		global   *ratelimit.Limit
		reach    ratelimit.Reach
		pairGap  time.Duration
		to       func(w, i int) string // the recipient of each admission; nil: none
		want     int                   // -1: every admission to the recipients admitted
		wantBy   map[string]int
		// The distinct recipients admitted; 0: not checked.
		wantRecipients int
	}{
		{name: "the burst binds", accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 25}, 1000)}, want: 25},
		{name: "the cap binds", accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 30)}, want: 30},
		{
			name:     "two accounts, each its own limit",
			accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 20}, 1000), acct("b", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 17)},
			want:     37, wantBy: map[string]int{"a": 20, "b": 17},
		},
		{
			name:     "the global bucket binds",
			accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 100}, 1000), acct("b", ratelimit.Limit{Rate: 0.001, Burst: 100}, 1000)},
			global:   lim(0.001, 11), want: 11,
		},
		{
			name:     "the reach binds: distinct recipients",
			accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 1000), acct("b", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 1000)},
			reach:    ratelimit.Reach{Limit: 23},
			to:       func(w, i int) string { return fmt.Sprintf("+1555%03d%04d", w, i) },
			want:     23,
		},
		{
			name:     "the reach binds, a few recipients asked for again and again",
			accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 1000)},
			reach:    ratelimit.Reach{Limit: 5},
			to:       func(w, i int) string { return fmt.Sprintf("+1555000%04d", (w*each+i)%9) },
			// Five recipients get in, whichever five, and every admission to
			// them after the first is free: all of theirs are admitted.
			want: -1, wantRecipients: 5,
		},
		{
			name:     "the pair gap binds: one recipient",
			accounts: []limits.Account{acct("a", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 1000), acct("b", ratelimit.Limit{Rate: 0.001, Burst: 1000}, 1000)},
			pairGap:  time.Hour,
			to:       func(int, int) string { return "+15550000000" },
			want:     1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.SetNow(T0)
			g := h.Gate()
			ctx := context.Background()
			names := []string{}
			for _, a := range tc.accounts {
				names = append(names, a.Name)
			}
			if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: names, Today: Today, Force: true}); err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				by    = map[string]int{}
				to    = map[string]int{} // admissions by recipient
				total int
				wg    sync.WaitGroup
				errs  = make(chan error, goroutines)
			)
			start := make(chan struct{})
			for w := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := range each {
						r := limits.Request{ClaimID: fmt.Sprintf("w%d-%d", w, i), Accounts: tc.accounts, Global: tc.global, Today: Today,
							Reach: tc.reach, PairGap: tc.pairGap}
						if tc.to != nil {
							r.Recipient = tc.to(w, i)
						}
						a, err := g.Admit(ctx, r)
						if err != nil {
							errs <- err
							return
						}
						if a.OK {
							mu.Lock()
							by[a.Claim.Account]++
							to[r.Recipient]++
							total++
							mu.Unlock()
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			want := tc.want
			if want < 0 {
				want = 0
				for w := range goroutines {
					for i := range each {
						if to[tc.to(w, i)] > 0 {
							want++
						}
					}
				}
			}
			if tc.wantRecipients > 0 && len(to) != tc.wantRecipients {
				t.Fatalf("%d distinct recipients admitted, want exactly %d (%v)", len(to), tc.wantRecipients, to)
			}
			if total != want {
				t.Fatalf("%d admitted by %d goroutines at once, want exactly %d (%v)", total, goroutines, want, by)
			}
			for n, w := range tc.wantBy {
				if by[n] != w {
					t.Errorf("%s admitted %d, want %d", n, by[n], w)
				}
			}
			st, err := g.State(ctx, tc.accounts, tc.global)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for _, as := range st.Accounts {
				sum += as.Used
				if as.Used != by[as.Name] {
					t.Errorf("state of %s counts %d, admitted %d", as.Name, as.Used, by[as.Name])
				}
			}
			if sum != total {
				t.Errorf("state counts %d, admitted %d", sum, total)
			}
			if tc.reach.Limited() && st.Reach.Used != tc.reach.Allowed() {
				t.Errorf("state: %d recipients in the window, want the reach %d", st.Reach.Used, tc.reach.Limit)
			}
		})
	}

	// One claim from every goroutine at once: one admission, the rest repeats.
	t.Run("one claim id from every goroutine", func(t *testing.T) {
		h := newHarness(t)
		h.SetNow(T0)
		g := h.Gate()
		ctx := context.Background()
		accts := []limits.Account{acct("a", ratelimit.Limit{Rate: 1, Burst: 100}, 100)}
		if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{"a"}, Today: Today, Force: true}); err != nil {
			t.Fatal(err)
		}
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			fresh, replays int
		)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := g.Admit(ctx, limits.Request{ClaimID: "same", Accounts: accts, Today: Today})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case a.OK && a.Replayed:
					replays++
				case a.OK:
					fresh++
				}
			}()
		}
		wg.Wait()
		if fresh != 1 || replays != goroutines-1 {
			t.Fatalf("%d admitted, %d repeats; want 1 and %d", fresh, replays, goroutines-1)
		}
	})
}
