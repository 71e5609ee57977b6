// Package clock is wasend's one source of time: the wall clock in the
// product, a simulated clock in tests and forecasts. Code that only reads
// the time takes a func() time.Time; pass a clock's Now method value.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and waits, so tests can run days of sending in a
// second.
type Clock interface {
	Now() time.Time
	// After delivers on the channel once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

func (Real) Now() time.Time                         { return time.Now() }
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sim is a simulated clock for tests and forecasts: After jumps the time
// forward at once instead of waiting, and a test may Set, Advance or
// AdvanceTo it. After suits a single waiter (the engine's scheduling loop);
// other goroutines may read Now freely.
type Sim struct {
	mu  sync.Mutex
	now time.Time
	// OnAdvance, when set, runs after every forward jump (Advance,
	// AdvanceTo, After) with the old and new time, outside the lock: a test
	// uses it to reset quotas at midnight. Set does not run it.
	OnAdvance func(from, to time.Time)
}

// NewSim returns a simulated clock standing at start.
func NewSim(start time.Time) *Sim { return &Sim{now: start} }

func (c *Sim) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, forwards or backwards.
func (c *Sim) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d; a d of zero or less does nothing.
func (c *Sim) Advance(d time.Duration) {
	c.forward(func(now time.Time) time.Time { return now.Add(d) })
}

// AdvanceTo moves the clock to t unless it is already there or later.
func (c *Sim) AdvanceTo(t time.Time) {
	c.forward(func(time.Time) time.Time { return t })
}

// forward moves the clock to next(now) when that is later, then runs the
// OnAdvance hook.
func (c *Sim) forward(next func(now time.Time) time.Time) {
	c.mu.Lock()
	from, to := c.now, next(c.now)
	if !to.After(from) {
		c.mu.Unlock()
		return
	}
	c.now = to
	hook := c.OnAdvance
	c.mu.Unlock()
	if hook != nil {
		hook(from, to)
	}
}

func (c *Sim) After(d time.Duration) <-chan time.Time {
	c.Advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}
