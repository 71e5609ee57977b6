package ratelimit

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Reaction is one account's answer to throttling (130429, 80007): it tells
// throttling the rate causes from noise the rate does not change, and is
// the one place that decides an account's rate factor and rests. The send
// engine feeds it every answer the server gave; the ledger only stores its
// verdicts (Health.Reacted). Like a bucket it reads no clock.
//
// It counts answers and throttles at the factor in force (a window), the
// first from the account's first throttle on: until then the server's
// bucket, full when nothing was sent, hides any ceiling. When
// the throttled share rises above the noise it knows, it probes: the rate
// drops to ProbeDrop of itself for one window. If the share falls with the
// rate, the rate caused it: the account holds HoldMargin of what the server
// accepted at the higher rate (its ceiling). If it does not, it was noise:
// the share is learned as the noise and the rate is restored at the end of
// the probe, well within a minute. A run of BlockedRun throttles with no
// other answer, lasting BlockedSpan or more, is no rate at all: the
// account rests, the rest doubling with each further throttle up to
// MaxCooldownGrowth times the first. A retry hint from the server is
// always a rest of that length. Above a held ceiling the rate climbs back
// as Health.FactorAt says, so a ceiling that rises is found again.
//
// The zero Reaction is an account at its full rate that has seen nothing.
type Reaction struct {
	h       Health  // the factor in force, as this reaction last decided it
	win     tally   // answers at the current factor since the last verdict
	hi      tally   // while probing: the window at the higher rate
	hiF     float64 // while probing: the factor before the probe
	probing bool
	changed bool      // the factor changed at win.since: answers before its first SettleTime are not counted
	started bool      // a throttle was seen: answers before the first are not counted
	pre     int       // the answers before it, until the first window is judged (ready)
	noise   float64   // the throttled share found not to fall with the rate
	run     int       // throttles since the last other answer
	runFrom time.Time // the first of them
	blocks  int       // rests the run has taken
}

// Verdict is what an answer changes for its account.
type Verdict struct {
	Factor float64       // the share of the configured rate from now on; 0: unchanged
	Rest   time.Duration // the account sends nothing for this long; 0: no rest
}

// The reaction's settings. Windows are long enough to tell a 2 % share
// from 4 % (a few hundred answers), and short in time so that a slow
// account is judged within a minute too.
const (
	WindowAnswers = 200              // answers a verdict weighs at most
	WindowTime    = 15 * time.Second // or the time it waits for them
	// FastThrottles throttles within at least FastAnswers answers judge a
	// window early: a ceiling far below the rate is found in a fraction of
	// a second.
	FastThrottles = 6
	FastAnswers   = 30
	ProbeDrop     = 0.7
	HoldMargin    = 0.95
	BlockedRun    = 6
	BlockedSpan   = time.Second
	// SettleTime after a change of rate, answers still show the old one:
	// requests claimed before it, the tokens it left in the bucket.
	SettleTime = time.Second
	// MaxNoise bounds the share taken for noise: more than this is
	// probed again and again, in case it is a ceiling misjudged.
	MaxNoise = 0.05
)

type tally struct {
	answers, throttled int
	since              time.Time
}

func (w tally) share() float64 {
	if w.answers == 0 {
		return 0
	}
	return float64(w.throttled) / float64(w.answers)
}

// ready reports whether the window says enough to be judged at t.
func (w tally) ready(t time.Time) bool {
	return w.answers >= WindowAnswers ||
		(w.throttled >= FastThrottles && w.answers >= FastAnswers) ||
		(w.answers > 0 && t.Sub(w.since) >= WindowTime)
}

// NewReaction starts from a factor in force at t (0 or 1: the full rate).
func NewReaction(factor float64, t time.Time) Reaction {
	r := Reaction{win: tally{since: t}}
	if factor > 0 && factor < 1 {
		r.h = Health{Factor: factor, FactorSince: t}
	}
	return r
}

// FactorAt is the share of the configured rate in force at t, as decided.
func (r *Reaction) FactorAt(t time.Time) float64 { return r.h.FactorAt(t) }

// Noise is the throttled share learned not to depend on the rate.
func (r *Reaction) Noise() float64 { return r.noise }

// Answer takes one answer of the server at t: throttled or not, with the
// server's retry hint (0: none), and base the first rest of a blocked
// account. It returns what changes for the account.
func (r *Reaction) Answer(t time.Time, throttled bool, hint, base time.Duration) Verdict {
	var v Verdict
	if r.win.since.IsZero() {
		r.win.since = t
	}
	if !throttled {
		if r.blocks > 0 {
			// The block ended: what it counted says nothing of a rate.
			// (A run within a second, a burst above a ceiling, does.)
			r.win = tally{since: t}
		}
		r.run, r.blocks = 0, 0
	} else {
		if r.run == 0 {
			r.runFrom = t
		}
		r.run++
		if hint > 0 {
			v.Rest = hint
		}
		// A burst above a ceiling is throttled in a row too, within the
		// server's second; a block goes on past it.
		if r.run >= BlockedRun && t.Sub(r.runFrom) >= BlockedSpan {
			if hint <= 0 {
				v.Rest = min(base<<min(r.blocks, 8), MaxCooldownGrowth*base)
			}
			r.blocks++
			return v
		}
	}
	if !r.started {
		// Nothing was sent before the first requests, so the server's
		// bucket was full: it accepts a burst above any ceiling, and a
		// window counting it would see a ceiling far higher than it is.
		// The window starts after the first throttle (not counting it,
		// which would make a noise look larger than it is).
		if throttled {
			r.started, r.win = true, tally{since: t}
		} else {
			r.pre++
		}
		return v
	}
	if r.changed && t.Before(r.win.since.Add(SettleTime)) {
		// Claimed at the old rate, or spending the bucket it left (an
		// answer of another host sharing the reaction may come late).
		return v
	}
	r.win.answers++
	if throttled {
		r.win.throttled++
	}
	if !r.ready(t) {
		return v
	}
	if r.probing {
		v.Factor = r.judgeProbe(t)
	} else if s := r.win.share(); s > r.noise+margin(r.noise, r.win.answers) {
		// Above the noise: try a lower rate.
		r.hi, r.hiF, r.probing = r.win, r.h.FactorAt(t), true
		v.Factor = r.set(max(MinFactor, r.hiF*ProbeDrop), t)
	}
	r.win, r.changed, r.pre = tally{since: t}, v.Factor > 0, 0
	return v
}

// ready reports whether the window says enough to be judged at t. The
// first window may count the answers before the first throttle towards
// FastAnswers, for at most half of them: they show the server's first
// burst was spent, and a ceiling far below the rate would cost a window
// of FastAnswers at the full rate to show again.
func (r *Reaction) ready(t time.Time) bool {
	w := r.win
	return w.ready(t) || (w.throttled >= FastThrottles && w.answers >= FastAnswers-min(r.pre, FastAnswers/2))
}

// judgeProbe compares the share at the lower rate with the share before it
// and returns the factor to run at. Two models explain the windows: noise
// (the same share at both rates) and a ceiling (the server accepted the
// same hiF·(1-hi) of the configured rate at both, so the lower rate sees
// the share that leaves, or the noise below it). The ceiling is taken when
// it explains the lower window better (or the share fell further than it
// says: the window at the higher rate held a burst's throttles, of the
// start or of other hosts) and the change is no accident: the
// share fell by more than three standard deviations of the draws, or the
// ceiling is so far below that the lower rate must still be throttled well
// above the noise. A share that fell by two, less than the ceiling says,
// and is still above any noise, keeps the lower rate: hosts sharing the
// number (--limits) each lower theirs, and the server sees what they send
// together.
func (r *Reaction) judgeProbe(t time.Time) float64 {
	r.probing = false
	hi, lo, loF := r.hi.share(), r.win.share(), r.h.FactorAt(t)
	n1, n2 := float64(r.hi.answers), float64(r.win.answers)
	pooled := float64(r.hi.throttled+r.win.throttled) / (n1 + n2)
	sd := math.Sqrt(pooled * (1 - pooled) * (1/n1 + 1/n2))
	ceiling := r.hiF * (1 - hi)
	predicted := max(r.noise, 1-ceiling/loF)
	fits := lo <= predicted || math.Abs(lo-predicted) < math.Abs(lo-hi)
	deep := predicted > r.noise+margin(r.noise, r.win.answers)
	if fits && (hi-lo > 3*sd || deep) {
		if lo > r.noise+margin(r.noise, r.win.answers) {
			// Still above it at the lower rate: that window measured
			// the ceiling too, nearer it and mostly on more answers (a
			// window judged early weighs as few as FastAnswers).
			ceiling = loF * (1 - lo)
		} else {
			// The server took the probe's rate (but for the noise):
			// the ceiling is no lower, whatever a first window
			// swollen by a burst said.
			ceiling = max(ceiling, loF*(1-lo))
		}
		return r.set(max(MinFactor, HoldMargin*ceiling), t)
	}
	if hi-lo > 2*sd && lo > MaxNoise+margin(MaxNoise, r.win.answers) {
		// The share fell, but less than a ceiling of this host's alone
		// would make it: other hosts send from the number too (--limits).
		// The lower rate helps; keep it, and probe on from there.
		return r.set(loF, t)
	}
	// Noise: both windows are what is known of it. Capped, so that a
	// ceiling misjudged as noise is probed again once its share shows.
	r.noise = min(pooled, MaxNoise)
	return r.set(r.hiF, t)
}

func (r *Reaction) set(f float64, t time.Time) float64 {
	f = min(f, 1)
	r.changed = true
	r.h = Health{Factor: f, FactorSince: t}
	return f
}

// margin is how far a window's share may rise above the noise p by chance:
// three standard deviations of a share of n answers (p at least 1 %, so
// that a few throttles of an unknown noise do not look like a ceiling).
func margin(p float64, n int) float64 {
	return 3 * math.Sqrt(max(p, 0.01)/float64(max(n, 1)))
}

// How often a host passes its answers to a reaction it shares (Feed): a
// window lasts seconds, so FeedEvery delays a verdict little; but while
// throttles come, every quarter second at the old rate costs a few more,
// so a throttled answer goes within FeedSoon.
const (
	FeedEvery = 250 * time.Millisecond
	FeedSoon  = 25 * time.Millisecond
)

// FeedDue reports whether a host that last fed the shared reaction at
// fedAt, and has answers since (one of them throttled, when throttled),
// feeds it at t.
func FeedDue(fedAt, t time.Time, throttled bool) bool {
	d := t.Sub(fedAt)
	return d >= FeedEvery || (throttled && d >= FeedSoon)
}

// Answered is one answer as a host passes it to a reaction it shares
// with other hosts sending from the same number (--limits).
type Answered struct {
	At        time.Time
	Throttled bool
}

// Feed takes one host's answers, in the order it had them, into a
// reaction that every host sending from the number feeds: the windows then
// weigh what the server answered all of them, and a probe or a hold moves
// the rate of every host at once, as the server sees it. Rests stay each
// host's (its own Answer's: a retry hint, a block), so Feed gives none.
func (r *Reaction) Feed(as []Answered) {
	for _, a := range as {
		r.Answer(a.At, a.Throttled, 0, 0)
	}
}

// Decided is the last factor decided (1: the full rate) and when; the zero
// time when the reaction never changed it.
func (r *Reaction) Decided() (factor float64, since time.Time) {
	f := r.h.Factor
	if f <= 0 || f >= 1 {
		f = 1
	}
	return f, r.h.FactorSince
}

// reactionJSON is a Reaction as hosts sharing it store it.
type reactionJSON struct {
	Factor  float64   `json:"f,omitempty"`
	Since   time.Time `json:"fs"`
	Win     tallyJSON `json:"w"`
	Hi      tallyJSON `json:"hi"`
	HiF     float64   `json:"hif,omitempty"`
	Probing bool      `json:"p,omitempty"`
	Changed bool      `json:"c,omitempty"`
	Started bool      `json:"st,omitempty"`
	Pre     int       `json:"pre,omitempty"`
	Noise   float64   `json:"n,omitempty"`
	Run     int       `json:"r,omitempty"`
	RunFrom time.Time `json:"rf"`
	Blocks  int       `json:"b,omitempty"`
}

type tallyJSON struct {
	Answers   int       `json:"a,omitempty"`
	Throttled int       `json:"t,omitempty"`
	Since     time.Time `json:"s"`
}

// MarshalJSON writes the whole state, so that a reaction several hosts
// share (Feed) can be kept where all of them read it.
func (r Reaction) MarshalJSON() ([]byte, error) {
	return json.Marshal(reactionJSON{
		Factor: r.h.Factor, Since: r.h.FactorSince,
		Win: tallyJSON{r.win.answers, r.win.throttled, r.win.since},
		Hi:  tallyJSON{r.hi.answers, r.hi.throttled, r.hi.since},
		HiF: r.hiF, Probing: r.probing, Changed: r.changed, Started: r.started, Pre: r.pre, Noise: r.noise,
		Run: r.run, RunFrom: r.runFrom, Blocks: r.blocks,
	})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Reaction) UnmarshalJSON(b []byte) error {
	var j reactionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("throttle reaction: %w", err)
	}
	*r = Reaction{
		h:   Health{Factor: j.Factor, FactorSince: j.Since},
		win: tally{j.Win.Answers, j.Win.Throttled, j.Win.Since},
		hi:  tally{j.Hi.Answers, j.Hi.Throttled, j.Hi.Since},
		hiF: j.HiF, probing: j.Probing, changed: j.Changed, started: j.Started, pre: j.Pre, noise: j.Noise,
		run: j.Run, runFrom: j.RunFrom, blocks: j.Blocks,
	}
	return nil
}
