package limits

import (
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// Snapshot is what a gate knows, at one decision, of the state a Request
// touches: loaded from its maps (Reference), from its keys (the Lua
// script, which mirrors Decide), or from the claim's transaction (the
// SQLite store). Decide reads it and changes nothing.
type Snapshot struct {
	// Hold is the repeat guard of (Request.Guard, Request.Recipient) as
	// the gate holds it: which host, until when. Zero when nobody holds it.
	Hold GuardHold
	// Last is the recipient's latest admission, by any of the accounts the
	// gate speaks for: the pair gap runs from its At.
	Last Contact
	// Sender is the account whose message the recipient last got, and
	// when: the sticky sender. A gate that remembers admissions only (the
	// shared ones) puts Last here too.
	Sender Contact
	// Windows are the reach windows the offered accounts count in: one for
	// a gate of one portfolio (Request.Reach), one per portfolio for a
	// claim that offers the numbers of several.
	Windows []Window
	// Accounts hold, in Request.Accounts' order, each account's state.
	Accounts []Balance
	// Global is the global bucket, nil when it is off.
	Global *ratelimit.Bucket
	// GlobalLimit is its limit.
	GlobalLimit ratelimit.Limit
}

// GuardHold is the host that holds a repeat guard, until when.
type GuardHold struct {
	Host  string
	Until time.Time
}

// Contact is a message to the recipient: when, from which account (its
// name as Request.Accounts gives it). The zero At is none.
type Contact struct {
	At      time.Time
	Account string
}

// Window is a portfolio's moving 24 h window, as the recipient meets it.
type Window struct {
	Reach  ratelimit.Reach
	Used   int       // distinct recipients in it
	Oldest time.Time // the oldest of their latest admissions; zero when none
	// Last is the recipient's latest admission counted in this window
	// (zero: none): in the window, the recipient costs nothing.
	Last time.Time
}

// Balance is one offered account's state at the decision.
type Balance struct {
	Bucket ratelimit.Bucket // settled under Request.Accounts[i].Limit
	Used   int              // counted in its current quota day
	// NotBefore holds the account back until then (a cooldown this gate
	// knows of; shared gates know none).
	NotBefore time.Time
	// Window is the index in Snapshot.Windows the account counts in; -1
	// for none (no reach).
	Window int
}

// Decision is Decide's answer for one message.
type Decision struct {
	OK bool
	// When OK: the account that sends (its index in Request.Accounts), its
	// bucket with the token taken, the global bucket's too (nil when off),
	// and whether the recipient is new to the account's window (it then
	// counts one more there).
	Index  int
	Bucket ratelimit.Bucket
	Global *ratelimit.Bucket
	New    bool
	// Sticky is the account the recipient is stuck to (it sent their
	// latest message within Request.Sticky), empty when none, whichever
	// rule answered (past the pair gap); Offered says it was among
	// Request.Accounts, so only it could be picked.
	Sticky  string
	Offered bool
	// When not OK: the first rule that refused, and the earliest instant
	// worth asking again (zero when only a quota reset can help, or the
	// global bucket never fills).
	Reason ratelimit.Reason
	Until  time.Time
	// Refused are the windows whose reach refused the recipient (a full
	// window, the recipient new to it), whatever the decision.
	Refused []int
	// Pick is ratelimit.Pick's answer among the accounts the recipient's
	// rules left, when the decision got that far (Index into
	// Request.Accounts).
	Pick ratelimit.Decision
}

// Decide is the admission of one message, the one written order of the
// rules every gate applies (Reference and the SQLite claim call it; the
// Lua script of redisgate mirrors it, held to it by a differential test).
// A refusal spends nothing; the first rule that refuses answers:
//
//  1. Repeat guard (Request.Guard): another host's hold on (Guard,
//     Recipient) refuses with ReasonElsewhere until it ends.
//  2. Pair gap: the latest admission at L with L > now-PairGap refuses
//     with ReasonPair until L+PairGap.
//  3. Reach (ratelimit.Reach's rule), per window: a recipient in it costs
//     nothing; any other goes only while fewer than Reach.Allowed()
//     distinct recipients are in it. Accounts whose window refuses are
//     out; none left refuses with ReasonReach until ratelimit.FreesAt of
//     the oldest recipient of the first window to make room (24 h from
//     now for an empty window: a limit the margin leaves nothing of).
//  4. Sticky: the recipient got a message from account X within Sticky,
//     and X is offered: only X may send, so a refusal is X's (its window,
//     tokens, cap). X not offered: any may (Decision.Offered false).
//  5. ratelimit.Pick among the accounts left: healthy before demoted,
//     the fullest bucket relative to its burst, then the first; an account
//     at its cap, cooling down or without a token waits (ReasonCapped,
//     ReasonTokens). Then the global bucket (ReasonGlobal).
//  6. Admitted: one token from the account's bucket and one from the
//     global bucket.
//
// What the gate writes back (the count against the cap, the recipient's
// memory, the window, the guard) is the gate's; Decide reads no clock and
// does no I/O.
func Decide(s Snapshot, r Request, now time.Time) Decision {
	if r.Guard != "" && s.Hold.Host != "" && s.Hold.Host != r.Host && now.Before(s.Hold.Until) {
		return Decision{Reason: ReasonElsewhere, Until: s.Hold.Until}
	}
	if last := s.Last.At; r.PairGap > 0 && !last.IsZero() && last.After(now.Add(-r.PairGap)) {
		return Decision{Reason: ReasonPair, Until: last.Add(r.PairGap)}
	}

	var d Decision
	only := -1
	if snd := s.Sender; r.Sticky > 0 && snd.Account != "" && snd.At.After(now.Add(-r.Sticky)) {
		d.Sticky = snd.Account
		for i, a := range r.Accounts {
			if a.Name == snd.Account {
				only, d.Offered = i, true
			}
		}
	}
	// Small arrays keep a decision off the heap for the usual few
	// accounts and windows.
	var admitsBuf, openBuf [8]bool
	admits := append(admitsBuf[:0], make([]bool, len(s.Windows))...)
	for w, win := range s.Windows {
		if ok, _ := win.Reach.Admit(now, win.Last, win.Used); ok || !win.Reach.Limited() {
			admits[w] = true
			continue
		}
		d.Refused = append(d.Refused, w)
	}
	open := append(openBuf[:0], make([]bool, len(s.Accounts))...)
	anyOpen := false
	for i, b := range s.Accounts {
		open[i] = b.Window < 0 || admits[b.Window]
		anyOpen = anyOpen || open[i]
	}
	if !anyOpen {
		d.Reason, d.Until = ReasonReach, s.freesAt(d.Refused, now)
		return d
	}

	if only >= 0 && !open[only] {
		// The recipient waits for their own number's window.
		d.Reason, d.Until = ReasonReach, s.freesAt([]int{s.Accounts[only].Window}, now)
		return d
	}

	var (
		candsBuf [8]ratelimit.Candidate
		idxBuf   [8]int
		cands    = candsBuf[:0]
		idx      = idxBuf[:0]
	)
	for i, a := range r.Accounts {
		if !open[i] || (only >= 0 && i != only) {
			continue
		}
		b := s.Accounts[i]
		cands = append(cands, ratelimit.Candidate{Limit: a.Limit, Bucket: b.Bucket, Used: b.Used, DailyCap: a.DailyCap,
			NotBefore: b.NotBefore, Demoted: a.Demoted})
		idx = append(idx, i)
	}
	var global *ratelimit.Bucket
	if s.Global != nil {
		g := *s.Global
		global = &g
	}
	p := ratelimit.Pick(now, cands, global, s.GlobalLimit)
	if p.Index >= 0 {
		p.Index = idx[p.Index]
	}
	d.Pick = p
	if p.Index < 0 {
		d.Reason, d.Until = p.Reason, p.Until
		return d
	}
	i, a := p.Index, r.Accounts[p.Index]
	// Pick's ready is TakeAt's success: both compare with one epsilon.
	d.OK, d.Index = true, i
	d.Bucket, _ = s.Accounts[i].Bucket.TakeAt(a.Limit, now, 1)
	if global != nil {
		g, _ := global.TakeAt(s.GlobalLimit, now, 1)
		d.Global = &g
	}
	if w := s.Accounts[i].Window; w >= 0 {
		win := s.Windows[w]
		d.New = win.Reach.Limited() && !ratelimit.InWindow(now, win.Last)
	}
	return d
}

// freesAt is when the first of the windows makes room: the oldest of its
// recipients leaves it (now, for an empty one).
func (s Snapshot) freesAt(windows []int, now time.Time) time.Time {
	var at time.Time
	for _, w := range windows {
		oldest := s.Windows[w].Oldest
		if oldest.IsZero() {
			oldest = now
		}
		if f := ratelimit.FreesAt(oldest); at.IsZero() || f.Before(at) {
			at = f
		}
	}
	return at
}
