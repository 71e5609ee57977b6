package sandbox

import "time"

// bucket is a token bucket with lazy refill, as in x/time/rate: it holds
// tokens and the time they were counted, and never reads a clock itself.
type bucket struct {
	rate   float64 // tokens per second
	burst  float64 // capacity: one second's worth, at least one message
	tokens float64
	last   time.Time
}

func newBucket(rate float64, now time.Time) *bucket {
	burst := max(rate, 1)
	return &bucket{rate: rate, burst: burst, tokens: burst, last: now}
}

// allow takes one token at now if there is one. A clock that steps back
// (concurrent callers of a fake clock) earns nothing rather than going
// negative.
func (b *bucket) allow(now time.Time) bool {
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
