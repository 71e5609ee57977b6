package ratelimit

import (
	"math"
	"sort"
	"time"
)

// ReachWindow is the moving window over which Meta's messaging limit counts
// distinct recipients of business-initiated messages.
const ReachWindow = 24 * time.Hour

// Reach is a business portfolio's messaging limit: at most Limit distinct
// recipients in any moving ReachWindow, shared by all its numbers, of which
// Margin (a fraction) is kept back. A Limit of 0 or less enforces nothing
// (unlimited, or not known).
//
// The rule, on which every user of a reach agrees (the SQLite claim, the
// planner, a shared gate elsewhere): a recipient messaged by any number of
// the portfolio within the window costs nothing; any other costs one unit,
// and only while fewer than Allowed distinct recipients are in the window.
// Since a free send only goes to a recipient already in the window, the
// distinct recipients of every window then stay within Allowed. Where
// instants may go backwards (claims of several processes, each at its own
// now), the window's count includes the sends logged after the instant
// too: a new recipient then joins every window ending from it on, each of
// which those sends are in (TestReachBackwardsClock in internal/claim).
type Reach struct {
	Limit  int
	Margin float64
}

// Limited reports whether the reach restricts anything.
func (r Reach) Limited() bool { return r.Limit > 0 }

// Allowed is the limit minus the margin: how many distinct recipients
// wasend lets into one window. The margin is rounded up, so 5 % of 250
// keeps 13 back.
func (r Reach) Allowed() int {
	if !r.Limited() {
		return math.MaxInt
	}
	keep := int(math.Ceil(float64(r.Limit)*r.Margin - epsilon))
	return max(r.Limit-max(keep, 0), 0)
}

// InWindow reports whether a send at last still counts at t. The zero time
// is no send.
func InWindow(t, last time.Time) bool {
	return !last.IsZero() && last.After(t.Add(-ReachWindow)) && !last.After(t)
}

// Admit decides whether a recipient last messaged (by any number of the
// portfolio) at last may be messaged at t, when used distinct recipients
// are in the window. free reports that the send costs nothing.
func (r Reach) Admit(t, last time.Time, used int) (ok, free bool) {
	if InWindow(t, last) {
		return true, true
	}
	return used < r.Allowed(), false
}

// FreesAt is when a recipient last messaged at oldest — the oldest of the
// latest sends to the recipients in the window — leaves it, making room
// for one more.
func FreesAt(oldest time.Time) time.Time { return oldest.Add(ReachWindow) }

// ReachLog is a portfolio's window kept in memory: the latest send to each
// recipient. The planner and tests use it; the store keeps the same facts
// in a table.
type ReachLog struct {
	Reach Reach
	last  map[string]time.Time
}

// NewReachLog returns an empty log for r.
func NewReachLog(r Reach) *ReachLog { return &ReachLog{Reach: r, last: map[string]time.Time{}} }

// Used counts the distinct recipients in the window at t.
func (l *ReachLog) Used(t time.Time) int {
	n := 0
	for _, at := range l.last {
		if InWindow(t, at) {
			n++
		}
	}
	return n
}

// Send admits to at t as Admit decides and, when admitted, logs the send.
// When refused, until is when the window has room again.
func (l *ReachLog) Send(t time.Time, to string) (ok bool, until time.Time) {
	if !l.Reach.Limited() {
		l.last[to] = t
		return true, time.Time{}
	}
	ok, _ = l.Reach.Admit(t, l.last[to], l.Used(t))
	if ok {
		l.last[to] = t
		return true, time.Time{}
	}
	return false, FreesAt(l.oldest(t))
}

// oldest is the oldest latest send in the window at t.
func (l *ReachLog) oldest(t time.Time) time.Time {
	var o time.Time
	for _, at := range l.last {
		if InWindow(t, at) && (o.IsZero() || at.Before(o)) {
			o = at
		}
	}
	return o
}

// ReachQueue is a window of distinct recipients who are all new, as in a
// forecast of one campaign: only the instants matter, oldest first. Its
// operations cost O(1) amortised, so a planner can run millions of sends.
type ReachQueue struct {
	Reach Reach
	times []time.Time // sorted; times[head:] are in the window
	head  int
}

// NewReachQueue returns a window holding the latest sends in, in any order.
func NewReachQueue(r Reach, in []time.Time) *ReachQueue {
	q := &ReachQueue{Reach: r, times: append([]time.Time(nil), in...)}
	sort.Slice(q.times, func(i, j int) bool { return q.times[i].Before(q.times[j]) })
	return q
}

func (q *ReachQueue) expire(t time.Time) {
	for q.head < len(q.times) && !InWindow(t, q.times[q.head]) {
		q.head++
	}
	if q.head > 1024 && q.head*2 > len(q.times) {
		q.times = append([]time.Time(nil), q.times[q.head:]...)
		q.head = 0
	}
}

// Room reports whether a new recipient may be messaged at t; when not,
// until is when one leaves the window. Times must not go backwards.
func (q *ReachQueue) Room(t time.Time) (ok bool, until time.Time) {
	if !q.Reach.Limited() {
		return true, time.Time{}
	}
	q.expire(t)
	if len(q.times)-q.head < q.Reach.Allowed() {
		return true, time.Time{}
	}
	return false, FreesAt(q.times[q.head])
}

// Add logs a send to a new recipient at t (not before the last one).
func (q *ReachQueue) Add(t time.Time) {
	if q.Reach.Limited() {
		q.times = append(q.times, t)
	}
}
