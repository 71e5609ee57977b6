package campaign

import (
	"fmt"
	"time"
)

// A claimed row is leased to its runner: it carries the runner, a lease
// deadline and a fence. The fence is the row's claim count (its attempts
// column), which every claim raises, so it changes with every claim of the
// row and only grows. Every write after the claim — the request's start,
// its outcome, a put-back — carries the claim's fence and changes the row
// only while the fence still matches: a runner that lost its lease (it
// stalled, its host was cut off) cannot overwrite the row's next holder
// (River #1302 is that bug). Heartbeats extend the leases of a runner's
// rows; a rescuer that any live runner may run ends the leases that ran out
// (LeaseExpiry), one rescuer at a time.

// LeaseTerm is how long a claim holds its row without a heartbeat: a row
// whose runner stopped beating for longer is taken back (LeaseExpiry). It
// is the stale period runners have always been given.
const LeaseTerm = 30 * time.Second

// HeartbeatEvery is how often a runner beats, extending its leases.
const HeartbeatEvery = 2 * time.Second

// ExtendWithin is how near its end a lease must be for a heartbeat to
// extend it (to LeaseTerm from the beat). Most rows are sent and recorded
// long before, so a beat rewrites only the few still in flight after half
// a term instead of every row in flight (on Postgres, three hosts' beats
// rewrote 300–500 rows every two seconds, each through the count
// triggers). A lease still never ends while its runner beats: half a term
// is many heartbeats.
const ExtendWithin = LeaseTerm / 2

// Untouched is how long after its claim a lease surely holds: no heartbeat
// extends it before it is within ExtendWithin of its end, and nobody may
// take the row before the end. A claim marked started in its own
// transaction is sent only within this time (no Start checks its fence
// later); after it, it is put back unsent.
const Untouched = LeaseTerm - ExtendWithin

// LostAfter is how long a runner may be silent before status shows it
// lost: two heartbeats. (Its leases last LeaseTerm: a runner paused for a
// moment keeps its rows.)
const LostAfter = 2 * HeartbeatEvery

// LeaseRule is what the end of a lease does to a claimed row: by whether
// its request started, the move it makes and why.
type LeaseRule struct {
	Started bool
	Move    Transition
	Why     string
}

// LeaseExpiry is what becomes of a row whose lease ran out (or whose
// runner is known dead): only a row in state Sending is leased, and the
// only question is whether its request may have reached the API. A row
// whose request never started goes back to pending for anyone to claim; a
// row whose request may have started becomes unknown, never resent blindly
// (webhooks or `retry --unknown` settle it).
var LeaseExpiry = []LeaseRule{
	{false, MoveLapse, "the lease ran out before the request started: nothing reached the API"},
	{true, MoveRescue, "the lease ran out after the request started: it may have reached the API"},
}

// Expire is the move the end of a lease makes for a row in state s whose
// request started (or not); ok is false for a row that holds no lease.
func Expire(s State, started bool) (t Transition, ok bool) {
	if s != Sending {
		return 0, false
	}
	for _, r := range LeaseExpiry {
		if r.Started == started {
			return r.Move, true
		}
	}
	return 0, false
}

// FencedMoves are the writes after a claim: each changes a row only while
// it is still that claim (its fence matches), and a refusal changes
// nothing. Marking a request started is not a state move (the row stays
// Sending) but is fenced all the same: a request starts only under a lease
// still held.
var FencedMoves = []Transition{MoveRecordSent, MoveRecordHeld, MoveRecordRetry, MovePutBack, MoveRecordFailed, MoveRecordUnknown}

// Fenced reports whether t is a write after a claim, conditional on the
// claim's fence.
func Fenced(t Transition) bool {
	for _, f := range FencedMoves {
		if f == t {
			return true
		}
	}
	return false
}

// FenceOK is the fence check: a write carrying the claim's fence applies
// to a row whose fence is rowFence only if they are equal. A row claimed
// again since has a greater fence; nothing has a smaller one.
func FenceOK(claimFence, rowFence int64) bool { return claimFence == rowFence }

// ErrFenced is what a write refused by its fence is: the row is no longer
// the claim's (its lease ran out and it was taken back, or another runner
// claims it now). Nothing was changed; the caller drops the row and never
// sends it again.
var ErrFenced = fmt.Errorf("the row is no longer this claim's (lease lost)")

// FenceError lists the rows whose writes were refused by their fence, in
// a batch whose other writes were made.
type FenceError struct {
	Rows []int64
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("%d row(s) no longer this runner's claim (lease lost): left to their holder", len(e.Rows))
}

func (e *FenceError) Unwrap() error { return ErrFenced }
