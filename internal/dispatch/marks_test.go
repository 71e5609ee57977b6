package dispatch

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestMarksFirst: the recorder's and the claim loop's transactions wait
// while a mark waits for the writer or holds it, and only that long; a
// mark due but never made holds them no longer than max.
func TestMarksFirst(t *testing.T) {
	never := func() bool { return false }
	ctx := context.Background()

	t.Run("no mark: no wait", func(t *testing.T) {
		m := marksFirst{max: time.Hour}
		m.wait(ctx, never)
	})

	t.Run("a mark in: until it leaves", func(t *testing.T) {
		m := marksFirst{max: time.Hour}
		m.enter()
		returned := make(chan struct{})
		go func() { m.wait(ctx, never); close(returned) }()
		for waiting := false; !waiting; { // until the waiter waits for the leave
			select {
			case <-returned:
				t.Fatal("wait returned while a mark held the writer")
			default:
			}
			m.mu.Lock()
			waiting = m.ch != nil
			m.mu.Unlock()
			runtime.Gosched()
		}
		m.leave()
		<-returned
	})

	t.Run("due, never made: max", func(t *testing.T) {
		m := marksFirst{max: time.Millisecond}
		m.wait(ctx, func() bool { return true })
	})

	t.Run("due, then a mark: until it leaves", func(t *testing.T) {
		m := marksFirst{max: time.Hour}
		var made atomic.Bool
		returned := make(chan struct{})
		go func() { m.wait(ctx, func() bool { return !made.Load() }); close(returned) }()
		for waiting := false; !waiting; {
			m.mu.Lock()
			waiting = m.ch != nil
			m.mu.Unlock()
			runtime.Gosched()
		}
		m.enter()
		made.Store(true)
		m.leave()
		<-returned
	})
}
