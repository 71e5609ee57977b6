package ratelimit

import "time"

// Health is an account's standing after throttling: the share of its
// configured rate it may use, and until when it rests. Like a bucket it is
// a plain value, settled lazily at the instant it is read.
//
// The policy is AIMD, as in TCP: every account-scope throttle halves the
// rate (multiplicative decrease, never below MinFactor), and after a quiet
// period it climbs back by RecoveryStep of the configured rate per
// QuietPeriod (additive increase).
type Health struct {
	Factor        float64   // share of the configured rate; 0 means 1 (never throttled)
	FactorSince   time.Time // when Factor was set
	CooldownUntil time.Time // no sends before this instant
	Streak        int       // throttles in a row, each doubling the cool-down
	LastThrottle  time.Time
}

const (
	MinFactor    = 0.1
	RecoveryStep = 0.1
	QuietPeriod  = time.Minute
	// StreakReset forgets earlier throttles: the next cool-down is the
	// first again.
	StreakReset = 10 * time.Minute
	// MaxCooldownGrowth caps repeated cool-downs at this many times the first.
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

// Throttled returns the health after an account-scope throttle at t. The
// account rests for base, doubled for each throttle in a row up to
// MaxCooldownGrowth·base — or for hint when the server gave one, since it
// knows better.
func (h Health) Throttled(t time.Time, base, hint time.Duration) Health {
	streak := h.Streak
	if t.Sub(h.LastThrottle) > StreakReset {
		streak = 0
	}
	rest := base << min(streak, 8)
	rest = min(rest, MaxCooldownGrowth*base)
	if hint > 0 {
		rest = hint
	}
	until := t.Add(rest)
	if h.CooldownUntil.After(until) {
		until = h.CooldownUntil
	}
	return Health{
		Factor:        max(MinFactor, h.FactorAt(t)/2),
		FactorSince:   t,
		CooldownUntil: until,
		Streak:        streak + 1,
		LastThrottle:  t,
	}
}

// Demoted reports whether the account still runs below its configured
// rate: such accounts are chosen after healthy ones.
func (h Health) Demoted(t time.Time) bool { return h.FactorAt(t) < 1 }

// Scale returns l with its rate scaled by the factor in force at t.
func (h Health) Scale(l Limit, t time.Time) Limit {
	l.Rate *= h.FactorAt(t)
	return l
}
