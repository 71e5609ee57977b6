package ratelimit

import "time"

// Health is an account's standing after throttling: the share of its
// configured rate it may use, and until when it rests. Like a bucket it is
// a plain value, settled lazily at the instant it is read.
//
// What the factor and the rests should be is Reaction's decision; Health
// stores its verdicts (Reacted) and lets a lowered factor climb back by
// RecoveryStep of the configured rate per QuietPeriod after a quiet
// QuietPeriod, so a ceiling that rises is probed again and a factor left
// by a run that ended does not hold forever.
type Health struct {
	Factor        float64   // share of the configured rate; 0 means 1 (never throttled)
	FactorSince   time.Time // when Factor was set
	CooldownUntil time.Time // no sends before this instant
	Streak        int       // rests taken since the factor was last set
	LastThrottle  time.Time // the last rest's start
}

const (
	MinFactor    = 0.1
	RecoveryStep = 0.1
	QuietPeriod  = time.Minute
	// MaxCooldownGrowth caps repeated rests of a blocked account at this
	// many times the first.
	MaxCooldownGrowth = 4
)

// FactorAt returns the share of the configured rate in force at t.
func (h Health) FactorAt(t time.Time) float64 {
	f := h.Factor
	if f <= 0 || f >= 1 {
		return 1
	}
	if quiet := t.Sub(h.FactorSince) - QuietPeriod; quiet > 0 {
		f += RecoveryStep * quiet.Seconds() / QuietPeriod.Seconds()
	}
	return min(f, 1)
}

// Reacted returns the health after a Reaction's verdict at t: the factor
// set when factor > 0 (1 or more: the full rate), and a rest of rest when
// it is positive. A rest never shortens one already running.
func (h Health) Reacted(t time.Time, factor float64, rest time.Duration) Health {
	if factor > 0 {
		h.Factor, h.FactorSince, h.Streak = min(factor, 1), t, 0
	}
	if rest > 0 {
		if until := t.Add(rest); until.After(h.CooldownUntil) {
			h.CooldownUntil = until
		}
		h.Streak++
		h.LastThrottle = t
	}
	return h
}

// Demoted reports whether the account still runs below its configured
// rate: such accounts are chosen after healthy ones.
func (h Health) Demoted(t time.Time) bool { return h.FactorAt(t) < 1 }

// Scale returns l with its rate scaled by the factor in force at t.
func (h Health) Scale(l Limit, t time.Time) Limit {
	l.Rate *= h.FactorAt(t)
	return l
}
