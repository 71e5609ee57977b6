package dispatch

import (
	"fmt"
	"time"
)

// Policy is how a campaign is sent: the settings `campaign run` takes from
// its flags, carried as one value from cmd through runner to the engine.
// DefaultPolicy holds the defaults, for the flags and for the engine alike;
// a zero field means its default (except ErrorPauseRatio, where 0 is off).
type Policy struct {
	// Workers bounds the requests in flight; within it, the engine keeps
	// as many as the accounts' rate times the answers' latency needs.
	Workers int
	// StopWhenCapped ends Run with ErrCapped instead of waiting for quota.
	StopWhenCapped bool
	// Retry policy for transient failures: full-jitter exponential
	// backoff, at most MaxAttempts attempts of a row.
	MaxAttempts int
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Cooldown is how long an account rests once it is blocked (every
	// request throttled for a second; ratelimit.Reaction); repeated
	// throttles grow it up to 4×. Throttling that a lower rate cures
	// lowers the rate instead, and noise changes nothing.
	Cooldown time.Duration
	// Restriction is how long an account stops after a spam or messaging
	// limit (131048, 131064).
	Restriction time.Duration
	// ErrorPauseRatio pauses the campaign when more than this share of its
	// last 100 attempts failed permanently: a bad list burns a number's
	// quality rating. It counts once 20 attempts were made, or in a smaller
	// campaign as many as it has rows (at least 5). 0 turns it off.
	ErrorPauseRatio float64
	// OutageTimeout pauses the campaign (Run returns ErrOutage) when an
	// outage lasts this long (see Options.Probe).
	OutageTimeout time.Duration
	// LongWait ends Run with ErrRescheduled instead of waiting when every
	// open row waits for a retry further away than this: rows a status
	// webhook rescheduled a day later (131049). 0: wait however long.
	LongWait time.Duration
}

// DefaultPolicy is what `campaign run` sends with when no flag says
// otherwise.
func DefaultPolicy() Policy {
	return Policy{
		Workers:         DefaultMaxInFlight,
		MaxAttempts:     5,
		BackoffBase:     time.Second,
		BackoffMax:      time.Minute,
		Cooldown:        30 * time.Second,
		Restriction:     6 * time.Hour,
		ErrorPauseRatio: 0.2,
		OutageTimeout:   30 * time.Minute,
	}
}

// WithDefaults returns p with every unset (zero or negative) field set to
// DefaultPolicy's value. ErrorPauseRatio and StopWhenCapped are kept as
// they are: their zero values mean off.
func (p Policy) WithDefaults() Policy {
	d := DefaultPolicy()
	if p.Workers <= 0 {
		p.Workers = d.Workers
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BackoffBase <= 0 {
		p.BackoffBase = d.BackoffBase
	}
	if p.BackoffMax <= 0 {
		p.BackoffMax = d.BackoffMax
	}
	if p.Cooldown <= 0 {
		p.Cooldown = d.Cooldown
	}
	if p.Restriction <= 0 {
		p.Restriction = d.Restriction
	}
	if p.OutageTimeout <= 0 {
		p.OutageTimeout = d.OutageTimeout
	}
	return p
}

// Validate reports a setting that cannot work.
func (p Policy) Validate() error {
	if p.ErrorPauseRatio < 0 || p.ErrorPauseRatio > 1 {
		return fmt.Errorf("error pause ratio %v: must be between 0 and 1", p.ErrorPauseRatio)
	}
	return nil
}
