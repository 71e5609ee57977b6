package dispatch

import (
	"sync"
	"time"
)

// Clock is the engine's only source of time, so tests can run days of
// sending in a second.
type Clock interface {
	Now() time.Time
	// After delivers on the channel once d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                         { return time.Now() }
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// SimClock is a simulated clock for tests and forecasts: After jumps the
// time forward at once instead of waiting. It suits a single waiter (the
// engine's scheduling loop); other goroutines may read Now freely.
type SimClock struct {
	mu  sync.Mutex
	now time.Time
	// OnAdvance, when set, runs after every jump with the old and new time,
	// outside the lock: a test uses it to reset quotas at midnight.
	OnAdvance func(from, to time.Time)
}

// NewSimClock returns a simulated clock standing at start.
func NewSimClock(start time.Time) *SimClock { return &SimClock{now: start} }

func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *SimClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	from := c.now
	c.now = c.now.Add(d)
	to := c.now
	hook := c.OnAdvance
	c.mu.Unlock()
	if hook != nil {
		hook(from, to)
	}
}

func (c *SimClock) After(d time.Duration) <-chan time.Time {
	c.Advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}
