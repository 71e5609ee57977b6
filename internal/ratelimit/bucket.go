// Package ratelimit holds the arithmetic of wasend's limits: token buckets
// and daily caps, and the choice of which account may send next.
//
// Like golang.org/x/time/rate, a bucket is lazy: its state is a token count
// and the instant it was last settled, with no timers or goroutines. Unlike
// it, the state is a plain value so it can live in a database row and be
// taken atomically by several processes; and time is always passed in, never
// read here, so a test can run days in milliseconds.
package ratelimit

import (
	"math"
	"time"
)

// epsilon absorbs float rounding when comparing token counts, so that a
// bucket refilled to 0.9999999999 is not a whole interval late.
const epsilon = 1e-9

// Limit is a refill rate in tokens per second and a bucket capacity.
type Limit struct {
	Rate  float64
	Burst int
}

// Every returns the limit for one token per interval.
func Every(interval time.Duration, burst int) Limit {
	return Limit{Rate: 1 / interval.Seconds(), Burst: burst}
}

// Bucket is a token bucket's state: Tokens were available at At.
type Bucket struct {
	Tokens float64
	At     time.Time
}

// Full returns a bucket holding its whole burst at t.
func Full(l Limit, t time.Time) Bucket {
	return Bucket{Tokens: float64(l.Burst), At: t}
}

// TokensAt returns the tokens available at t. When t is before At (the
// clock went backwards, or another host's clock is behind) nothing is
// earned: the bucket never refills twice for the same interval.
func (b Bucket) TokensAt(l Limit, t time.Time) float64 {
	tokens := b.Tokens
	if elapsed := t.Sub(b.At); elapsed > 0 {
		tokens += elapsed.Seconds() * l.Rate
	}
	return math.Min(tokens, float64(l.Burst))
}

// Settle returns the bucket with the tokens earned up to t booked. Its At
// never moves backwards.
func (b Bucket) Settle(l Limit, t time.Time) Bucket {
	tokens := b.TokensAt(l, t)
	if t.Before(b.At) {
		t = b.At
	}
	return Bucket{Tokens: tokens, At: t}
}

// TakeAt takes n tokens at t. It reports false, and leaves the bucket as it
// was, when fewer than n tokens are available.
func (b Bucket) TakeAt(l Limit, t time.Time, n float64) (Bucket, bool) {
	s := b.Settle(l, t)
	if s.Tokens+epsilon < n {
		return b, false
	}
	s.Tokens -= n
	return s, true
}

// ReadyAt returns the earliest instant, not before t, at which n tokens are
// available. A request larger than the burst never becomes ready: the zero
// time is returned.
func (b Bucket) ReadyAt(l Limit, t time.Time, n float64) time.Time {
	if n > float64(l.Burst)+epsilon || l.Rate <= 0 {
		return time.Time{}
	}
	s := b.Settle(l, t)
	missing := n - s.Tokens
	if missing <= epsilon {
		return t // TakeAt(t) succeeds, even when t is behind At
	}
	// Round up so a waiter wakes when the token is there, not a hair before.
	wait := time.Duration(math.Ceil(missing / l.Rate * float64(time.Second)))
	return s.At.Add(wait)
}

// Relimit books the tokens earned under the old limit up to t, then caps them
// at the new burst. Call it when a rate changes so tokens already earned are
// kept, and none are earned retroactively at the new rate.
func (b Bucket) Relimit(old, new Limit, t time.Time) Bucket {
	s := b.Settle(old, t)
	s.Tokens = math.Min(s.Tokens, float64(new.Burst))
	return s
}
