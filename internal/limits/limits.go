// Package limits is the limits gate: the part of sending that must be shared
// between hosts when several send for one portfolio of numbers. It admits one
// message at a time against each number's token bucket and daily cap and the
// global bucket, the portfolio's reach, the pair gap and the sticky sender
// of its recipient; gives a cap back when the Cloud API proved a message was
// not accepted, and starts quota days.
//
// What is not here stays local to each host, in its SQLite file: the
// campaign's rows, attempts and results, which account a row is sent from,
// and every retry decision. A host asks the gate "may one message go now, and
// from which of these numbers?" and records the answer itself.
//
// The decision itself is Decide, pure: every gate loads what it knows into
// a Snapshot and writes the answer back. Two implementations agree step for
// step (package limitstest holds the tables both run): Reference, in memory
// on Decide, and redisgate, one Lua script per decision with Redis's own
// clock that mirrors Decide (a differential test holds it to Reference).
package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// Gate admits messages against limits shared between hosts. Every method is
// all-or-nothing: an error means nothing was spent, counted or reset (or, for
// a lost reply, that the caller cannot know and must not send; repeating the
// call with the same claim id is safe).
type Gate interface {
	// Admit takes one token from one of the request's accounts (and one from
	// the global bucket when it is on) and counts one against that account's
	// cap for its current quota day, and remembers the recipient (for the
	// reach, the pair gap and the sticky sender) — or nothing, with the
	// reason and when to ask again. The same ClaimID admitted twice is
	// counted once: the second call returns the first admission with
	// Replayed set and changes nothing.
	Admit(ctx context.Context, r Request) (Admission, error)
	// Refund gives back, once, what an admission counted: the API proved
	// the message was not accepted. The cap goes back; the recipient's
	// memory goes back to what it was before the admission, when no later
	// admission to that recipient replaced it (so the recipient leaves the
	// reach window if this admission brought them in, and the pair gap and
	// the sticky sender follow the message before) — as the SQLite store
	// takes a send back out of its log. The token stays spent. A claim
	// named by its id alone is refunded as admitted; one that names an
	// account and day must name the admission's.
	Refund(ctx context.Context, c Claim) (RefundResult, error)
	// ResetQuota starts a new quota day for the named accounts. Quota days
	// only move forward: without Force, an account on r.Today or later
	// keeps its day, so a cron line that fires twice (or a host whose clock
	// is behind) cannot double a cap. It is the only way to start
	// the shared state, or to start it again after it was lost: a reset
	// without Force then fails with ErrStateLost.
	ResetQuota(ctx context.Context, r ResetRequest) ([]Reset, error)
	// State reads the shared state of the named accounts and the global
	// bucket, for status output. It spends nothing.
	State(ctx context.Context, accounts []Account, global *ratelimit.Limit) (State, error)
	// Rebuild adds one host's part of a quota day the gate lost: what its
	// database counted for each account on the current calendar day, the
	// recipients it messaged in the moving window, and the repeat guards
	// its messages hold. The first Rebuild after a loss starts the state
	// again (a rebuilt generation, each account on r.Today#1); every host
	// adds its part once per generation (keyed by r.Host, so a second
	// Rebuild adds nothing), and until it has, Admit refuses it with
	// ErrRebuild. A gate whose state was not lost — or was started again by
	// a forced reset — refuses with ErrNotLost: adding a part to a living
	// count would count it twice.
	Rebuild(ctx context.Context, r RebuildRequest) (RebuildResult, error)
}

// ErrRebuild means the gate's state was rebuilt after a loss and the
// asking host has not added its part yet: it must Rebuild before it is
// admitted, so the day's count holds its messages.
var ErrRebuild = errors.New("the shared limits were rebuilt after a loss; this host's part of the day is not in them yet")

// ErrNotLost means a Rebuild found a living state: nothing to add to.
var ErrNotLost = errors.New("the shared limits hold their state (not lost, or started again by a forced reset): nothing to rebuild")

// RebuildRequest is one host's part of a lost quota day.
type RebuildRequest struct {
	Host  string    // the contributing host (or "hand:LABEL" for one added by hand)
	Today string    // the caller's calendar day, for the accounts the gate starts
	Now   time.Time // the caller's clock when it read its part: its instants are moved onto the gate's clock by Now's offset
	// Accounts: each account's count, and the calendar day it counted on
	// (only a count of the gate's current calendar day is added).
	Accounts []RebuildCount
	// Window: the recipients the host messaged from the portfolio in the
	// last 24 h, each with its latest message and number.
	Window []RebuildContact
	// Guards: the repeat guards its messages of the last 24 h hold.
	Guards []RebuildGuard
}

// RebuildCount is one account's count in a host's database.
type RebuildCount struct {
	Account string
	Day     string // YYYY-MM-DD
	Used    int
}

// RebuildContact is a recipient's latest message from a host.
type RebuildContact struct {
	Recipient, Account string
	At                 time.Time
}

// RebuildGuard is a repeat guard a host's message holds from At.
type RebuildGuard struct {
	Recipient, Guard string
	At               time.Time
}

// RebuildResult says what a Rebuild did.
type RebuildResult struct {
	Started bool              // this Rebuild started the state again
	Already bool              // the host had added its part before: nothing added now
	Added   map[string]int    // per account, the count added
	Days    map[string]string // per account, the quota day it was added to
	// OnRebuiltDay, when Already: per account, whether it is still on the
	// quota day the rebuild added to (no reset since) and some part added
	// anything to it, so a recovery run again starts no new day (a rebuild
	// of nothing, as of a Redis never used, is a fresh start that a forced
	// reset may start again).
	OnRebuiltDay map[string]bool
}

// Validate checks a rebuild request.
func (r RebuildRequest) Validate() error {
	if err := ValidName("host", r.Host); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if _, err := time.Parse(time.DateOnly, r.Today); err != nil {
		return fmt.Errorf("rebuild: today %q is not YYYY-MM-DD", r.Today)
	}
	if r.Now.IsZero() {
		return errors.New("rebuild: no clock reading")
	}
	for _, a := range r.Accounts {
		if err := ValidName("account", a.Account); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		if a.Used < 0 {
			return fmt.Errorf("rebuild: account %s: negative count %d", a.Account, a.Used)
		}
	}
	for _, c := range r.Window {
		if err := errors.Join(ValidName("recipient", c.Recipient), ValidName("account", c.Account)); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	for _, g := range r.Guards {
		if err := errors.Join(ValidName("recipient", g.Recipient), ValidName("repeat guard", g.Guard)); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	return nil
}

// ErrStateLost means the gate holds no shared state: a Redis restarted
// without persistence (or never set up). It hands out nothing — a fresh
// day of caps could exceed what Meta allows — until `wasend quota reset
// --force` rebuilds the day (Gate.Rebuild).
var ErrStateLost = errors.New("the shared limits hold no state (lost in a restart without persistence, or never started): " +
	"nothing is admitted until `wasend quota reset --force` rebuilds the quota day from the hosts' own counts")

// Account is one number as a request offers it: its name and its limits as
// the caller's configuration has them now. A changed Limit keeps the tokens
// earned under the old one (ratelimit.Bucket.Relimit).
type Account struct {
	Name     string
	Limit    ratelimit.Limit
	DailyCap int
	// Demoted accounts (recently throttled) are chosen only when no
	// healthy one has a token, as ratelimit.Pick does.
	Demoted bool
}

// Request asks for the admission of one message.
//
// The gate remembers, per recipient, its latest admission in the portfolio
// (instant, account, claim) whenever a Request names one, whatever rules
// the request asks for: a rule turned on later sees earlier messages. It
// knows admissions, not deliveries: "messaged" below means admitted and
// not refunded. The rules and their order are Decide's (decide.go): the
// repeat guard, the pair gap, the reach, the sticky sender, then
// ratelimit.Pick among the accounts left and the global bucket; a refusal
// spends nothing.
type Request struct {
	// ClaimID names this admission for refunds and repeats; unique across
	// hosts (the host's id and its attempt id, say).
	ClaimID string
	// Accounts that may send it. The choice among them is ratelimit.Pick's:
	// healthy before demoted, then the fullest bucket relative to its burst,
	// then the first.
	Accounts []Account
	// Global is the global bucket's limit, nil when it is off.
	Global *ratelimit.Limit
	// Today is the caller's calendar day (its WASEND_TZ), used only to
	// start the quota day of an account the gate has not seen yet.
	Today string

	// Recipient is the number the message goes to (E.164). Required when
	// Reach, PairGap, Sticky or Guard is set: those rules are about recipients.
	Recipient string
	// Reach is the portfolio's messaging limit: distinct recipients in a
	// moving 24 h, shared by all its numbers (ratelimit.Reach's rule). A
	// zero Reach checks nothing.
	Reach ratelimit.Reach
	// PairGap keeps two messages to one recipient, from any number of the
	// portfolio, at least this far apart. Zero: no gap.
	PairGap time.Duration
	// Sticky: a recipient messaged within it is sent from the number that
	// messaged them when that number is among Accounts (and only then
	// waits for its token); otherwise any number may, and Admission says
	// the stickiness broke. Zero: no stickiness.
	Sticky time.Duration

	// Guard names the message for the repeat guard across hosts (the
	// template, say): while another Host holds a claim on (Guard,
	// Recipient), admitted within GuardWindow and not refunded, the
	// recipient is refused with ReasonElsewhere — checked before every
	// other rule. An admission takes the claim for Host (a host's own
	// claim never refuses it); a refund of the admission that holds it
	// lets it go. Empty: no guard. Requires Recipient and Host.
	Guard string
	// Host names the host asking, among every host sharing the gate.
	Host string
}

// GuardWindow is how long an admission holds its recipient's repeat guard
// (Request.Guard) against other hosts: the store's window for the same
// template to the same person (screen.SameTemplateWindow). It runs from
// the admission whether the message was sent, is still in flight, or its
// host died holding it — a message whose fate is unknown may have gone —
// so a host that never returns holds nobody longer than that.
const GuardWindow = 24 * time.Hour

// Reasons the gate refuses for beyond ratelimit.Pick's.
const (
	// ReasonReach: the portfolio's messaging limit is used up; Until is
	// when its oldest recipient leaves the moving window.
	ReasonReach ratelimit.Reason = "reach"
	// ReasonPair: the recipient was messaged within PairGap; Until is when
	// the gap ends.
	ReasonPair ratelimit.Reason = "pair"
	// ReasonElsewhere: another host holds the recipient's repeat guard (it
	// sent the message, or has it in flight); Until is when that claim
	// ends. The caller skips the recipient rather than wait.
	ReasonElsewhere ratelimit.Reason = "elsewhere"
)

// Admission is the gate's answer to one Request.
type Admission struct {
	OK       bool
	Claim    Claim     // when OK: what Refund needs
	Index    int       // when OK: the chosen account's index in Request.Accounts (-1: a replay for an account not offered now)
	Used     int       // when OK and not Replayed: the account's count in its quota day, this one included
	Tokens   float64   // when OK and not Replayed: the account's tokens left
	At       time.Time // the gate's clock at the decision
	Replayed bool      // the ClaimID was admitted before; nothing was spent now
	// When OK and not Replayed: the account the recipient is stuck to (it
	// sent their latest admission within Request.Sticky), empty when none;
	// StickyBroken when that account was not offered and another was
	// picked — the caller counts the break (it knows why the account was
	// not offered: disabled, removed, restricted).
	// When not OK for tokens or the cap: the account the recipient is
	// stuck to when the refusal is that number's alone — the caller puts
	// this recipient off and goes on with the others.
	StickyAccount string
	StickyBroken  bool
	// When not OK: why, and the earliest instant worth asking again (zero
	// when only a quota reset can help, or the global bucket never fills),
	// on the gate's clock like At: a caller compares it with nothing of
	// its own but through UntilFrom.
	Reason ratelimit.Reason
	Until  time.Time
}

// UntilFrom is Until on the caller's clock, whose reading at the decision
// was now: the wait the gate measured on its own clock (Until - At),
// counted from now. A host whose clock runs ahead of the gate's would
// otherwise see every wait already over, and ask again at once; one behind
// would wait too long. Zero stays zero.
func (a Admission) UntilFrom(now time.Time) time.Time {
	if a.Until.IsZero() {
		return time.Time{}
	}
	return now.Add(a.Until.Sub(a.At))
}

// Claim identifies one admission: its id, the account and the quota day that
// counted it. A refund may name the id alone (Account and Day empty): the
// admission as the gate recorded it, for a host that knows no more of it
// (a claim whose lease ran out before its request started).
type Claim struct {
	ID      string
	Account string
	Day     string
}

// ByID reports whether c names the admission by its id alone.
func (c Claim) ByID() bool { return c.Account == "" && c.Day == "" }

// Validate checks a claim to refund: an id, and an account and a day
// both or neither.
func (c Claim) Validate() error {
	if c.ID == "" || (c.Account == "") != (c.Day == "") {
		return fmt.Errorf("refund: incomplete claim %+v", c)
	}
	return nil
}

// RefundResult says what a Refund did.
type RefundResult int

const (
	Refunded        RefundResult = iota + 1 // the cap was given back now
	AlreadyRefunded                         // an earlier Refund gave it back
	UnknownClaim                            // no such admission (or it expired, or the state was lost)
)

func (r RefundResult) String() string {
	switch r {
	case Refunded:
		return "refunded"
	case AlreadyRefunded:
		return "already refunded"
	case UnknownClaim:
		return "unknown claim"
	}
	return "RefundResult(" + strconv.Itoa(int(r)) + ")"
}

// ResetRequest starts a quota day.
type ResetRequest struct {
	Accounts []string
	Today    string // the caller's calendar day, YYYY-MM-DD
	Force    bool
}

// Reset is what a quota reset did to one account.
type Reset struct {
	Account string
	Day     string // the quota day now current
	LastDay string // the one before; empty when the account had none
	Before  int    // the count of LastDay
	Reset   bool   // false: already on Today (or Behind) and not forced
	// Behind: Today is earlier than LastDay's calendar day (a clock set
	// back, a zone behind); the calendar day stays LastDay's, even forced.
	Behind bool
}

// State is the shared state at one instant of the gate's clock.
type State struct {
	Generation string
	At         time.Time
	Accounts   []AccountState
	Global     *BucketState // nil when the global bucket is off
	Reach      ReachState   // the portfolio's moving window at At
}

// ReachState is the portfolio's moving 24 h window: what its reach is
// measured against.
type ReachState struct {
	Used   int       // distinct recipients admitted in the window (At-24 h, At]
	Oldest time.Time // the oldest of their latest admissions; zero when none
}

// FreesAt is when the oldest recipient leaves the window, making room for
// one more; zero when the window is empty.
func (r ReachState) FreesAt() time.Time {
	if r.Oldest.IsZero() {
		return time.Time{}
	}
	return ratelimit.FreesAt(r.Oldest)
}

// AccountState is one account's shared state.
type AccountState struct {
	Name   string
	Day    string // current quota day; empty before the first admission or reset
	Used   int
	Tokens float64
}

// BucketState is a bucket's tokens at State.At.
type BucketState struct {
	Tokens float64
}

// ClaimTTL is how long an admission is remembered for refunds and repeats.
// A refund comes within a request's timeout; two days outlive any quota day
// a refund could still matter to.
const ClaimTTL = 48 * time.Hour

// DayID names a quota day: the calendar day it started on and how many
// quota days the account has had, so a forced second reset on one calendar
// day is a new day with its own count.
func DayID(calendar string, epoch int) string {
	return calendar + "#" + strconv.Itoa(epoch)
}

// ParseDayID splits a DayID.
func ParseDayID(id string) (calendar string, epoch int, err error) {
	cal, e, ok := strings.Cut(id, "#")
	if !ok {
		return "", 0, fmt.Errorf("quota day %q: want DAY#N", id)
	}
	n, err := strconv.Atoi(e)
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("quota day %q: epoch is not a positive number", id)
	}
	return cal, n, nil
}

// Validate checks a request before anything is asked of the gate.
func (r Request) Validate() error {
	if r.ClaimID == "" {
		return errors.New("admit: empty claim id")
	}
	if len(r.Accounts) == 0 {
		return fmt.Errorf("admit %s: no accounts offered", r.ClaimID)
	}
	if _, err := time.Parse(time.DateOnly, r.Today); err != nil {
		return fmt.Errorf("admit %s: today %q is not YYYY-MM-DD", r.ClaimID, r.Today)
	}
	seen := map[string]bool{}
	for i, a := range r.Accounts {
		if err := ValidName("account", a.Name); err != nil {
			return fmt.Errorf("admit %s: account %d: %w", r.ClaimID, i, err)
		}
		if seen[a.Name] {
			return fmt.Errorf("admit %s: account %s offered twice", r.ClaimID, a.Name)
		}
		seen[a.Name] = true
		if err := validLimit(a.Limit); err != nil {
			return fmt.Errorf("admit %s: account %s: %w", r.ClaimID, a.Name, err)
		}
		if a.DailyCap < 0 {
			return fmt.Errorf("admit %s: account %s: negative daily cap %d", r.ClaimID, a.Name, a.DailyCap)
		}
	}
	if r.Global != nil {
		if err := validLimit(*r.Global); err != nil {
			return fmt.Errorf("admit %s: global limit: %w", r.ClaimID, err)
		}
	}
	if r.PairGap < 0 || r.Sticky < 0 {
		return fmt.Errorf("admit %s: negative pair gap %v or sticky time %v", r.ClaimID, r.PairGap, r.Sticky)
	}
	if !(r.Reach.Margin >= 0 && r.Reach.Margin <= 1) {
		return fmt.Errorf("admit %s: reach margin %v: want a fraction from 0 to 1", r.ClaimID, r.Reach.Margin)
	}
	if r.Guard != "" {
		if err := ValidName("repeat guard", r.Guard); err != nil {
			return fmt.Errorf("admit %s: %w", r.ClaimID, err)
		}
		if err := ValidName("host", r.Host); err != nil {
			return fmt.Errorf("admit %s: a repeat guard needs its host: %w", r.ClaimID, err)
		}
	}
	if r.Recipient == "" {
		if r.Reach.Limited() || r.PairGap > 0 || r.Sticky > 0 || r.Guard != "" {
			return fmt.Errorf("admit %s: no recipient, but the reach, the pair gap, the sticky sender and the repeat guard are about recipients", r.ClaimID)
		}
		return nil
	}
	// A recipient is part of a key and a field of a claim's record: the
	// bounds of a name (no tabs, no braces).
	if err := ValidName("recipient", r.Recipient); err != nil {
		return fmt.Errorf("admit %s: %w", r.ClaimID, err)
	}
	return nil
}

// Validate checks a reset request.
func (r ResetRequest) Validate() error {
	if _, err := time.Parse(time.DateOnly, r.Today); err != nil {
		return fmt.Errorf("quota reset: today %q is not YYYY-MM-DD", r.Today)
	}
	seen := map[string]bool{}
	for _, n := range r.Accounts {
		if err := ValidName("account", n); err != nil {
			return fmt.Errorf("quota reset: %w", err)
		}
		if seen[n] {
			return fmt.Errorf("quota reset: account %s named twice", n)
		}
		seen[n] = true
	}
	return nil
}

func validLimit(l ratelimit.Limit) error {
	if l.Rate < 0 || l.Burst < 0 {
		return fmt.Errorf("negative limit (rate %v, burst %d)", l.Rate, l.Burst)
	}
	return nil
}

// ValidName reports whether s may name a portfolio or account in the
// gate's keys: not empty, at most 200 bytes, and no braces (a brace would
// move a Redis Cluster hash tag) or control characters.
func ValidName(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s name", what)
	}
	if len(s) > 200 {
		return fmt.Errorf("%s name %.20q…: longer than 200 bytes", what, s)
	}
	for _, r := range s {
		if r == '{' || r == '}' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s name %q: braces and control characters are not allowed", what, s)
		}
	}
	return nil
}
