package dispatch

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/clock"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// feed answers n requests evenly over d from at, each taking latency, with
// inFlight outstanding, failing the given share, the tokens pacing sending
// unless the rate is unlimited; it returns the end time.
func feed(c *Concurrency, at time.Time, d time.Duration, n int, latency time.Duration, inFlight int, failShare float64) time.Time {
	step := d / time.Duration(n)
	bad := 0
	for i := 0; i < n; i++ {
		at = at.Add(step)
		if c.rate < 1000 {
			c.TokensPaced()
		}
		fail := float64(bad) < failShare*float64(i+1)
		if fail {
			bad++
		}
		c.Answer(at, latency, inFlight, fail)
	}
	return at
}

// TestConcurrencyLittle: with the tokens pacing sending, the limit is the
// accounts' rate times the latency, with headroom, within [min, max].
func TestConcurrencyLittle(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		rate    float64
		latency time.Duration
		want    int
	}{
		{"ten numbers at 80/s, 200 ms", 2048, 800, 200 * time.Millisecond, 800*0.2*1.5 + 8},
		{"ten numbers at 80/s, 2 s: the bound", 2048, 800, 2 * time.Second, 2048},
		{"ten numbers at 80/s, 2 s, a wider bound", 4096, 800, 2 * time.Second, 800*2*1.5 + 8},
		{"demo tiers, 1 msg/s", 2048, 1, 200 * time.Millisecond, 8},
		{"every account capped", 2048, 0, 200 * time.Millisecond, 8},
		{"unlimited tiers: what the server takes without a queue, + 192", 2048, math.Inf(1), time.Millisecond, 192},
		{"--workers 2", 2, 800, 200 * time.Millisecond, 2},
		{"--workers 1", 1, 0, 200 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConcurrency(tt.max)
			if got, want := c.Limit(), min(tt.max, 64); got != want {
				t.Fatalf("before any answer: limit %d, want %d", got, want)
			}
			c.TokensPaced()
			if got := c.Limit(); got != tt.max {
				t.Fatalf("before any answer, the tokens pacing: limit %d, want the bound %d", got, tt.max)
			}
			c.SetRate(tt.rate)
			feed(c, t0, 10*time.Second, 1000, tt.latency, 1, 0)
			if got := c.Limit(); got != tt.want {
				t.Errorf("limit %d, want %d", got, tt.want)
			}
		})
	}
}

// TestConcurrencyGuard steps a server through trouble at named instants:
// the limit follows the rate times the latency, a round of errors halves
// what was in flight, a slowing server cuts it further, and quiet rounds
// grow it back additively, also to a new, slower normal.
func TestConcurrencyGuard(t *testing.T) {
	c := NewConcurrency(2048)
	c.SetRate(800)
	const fast, slow = 200 * time.Millisecond, 2 * time.Second
	little := func(lat time.Duration) int { return int(800*lat.Seconds()*1.5) + 8 }

	at := feed(c, t0, 5*time.Second, 4000, fast, 160, 0)
	if got := c.Limit(); got != little(fast) {
		t.Fatalf("t=5s healthy: limit %d, want %d", got, little(fast))
	}

	// One round where a fifth of the answers are server errors: the cap
	// halves what was in flight.
	at = feed(c, at, 250*time.Millisecond, 200, fast, 160, 0.2)
	if got, want := c.Limit(), 80; got != want {
		t.Fatalf("after a round of errors: limit %d, want %d", got, want)
	}
	// A few errors (under a tenth) are no distress: quiet rounds grow the
	// cap back by an eighth of the Little's-law limit each.
	prev := c.Limit()
	at = feed(c, at, 250*time.Millisecond, 200, fast, 80, 0.05)
	if got := c.Limit(); got <= prev || got > prev+little(fast)/8+1 {
		t.Fatalf("after a quiet round: limit %d, want a step above %d", got, prev)
	}
	at = feed(c, at, 5*time.Second, 4000, fast, 160, 0)
	if got := c.Limit(); got != little(fast) {
		t.Fatalf("after quiet seconds: limit %d, want %d again", got, little(fast))
	}

	// The server slows to 2 s while tokens pace sending: the latency is
	// over twice the baseline, so rounds cut the cap instead of letting
	// Little's law pile 1,600 requests on a struggling server.
	at = feed(c, at, 4*time.Second, 2000, slow, 200, 0)
	if got := c.Limit(); got >= little(fast) {
		t.Fatalf("server slowed to 2 s: limit %d, want below %d", got, little(fast))
	}
	// Once the slower answers are the baseline (at most two windows),
	// quiet rounds take the limit to the new rate × latency (the bound).
	at = feed(c, at, 2*baseWindow, 20000, slow, 1600, 0)
	at = feed(c, at, 20*slow, 16000, slow, 1600, 0)
	if got := c.Limit(); got != 2048 {
		t.Fatalf("2 s is the new normal: limit %d, want the bound 2048", got)
	}
	_ = at
}

// TestConcurrencyBound: when the limit itself holds sending back (tiers
// faster than the server), the cap keeps what the server takes without a
// queue — throughput × baseline latency, with headroom — plus 192: a
// loopback server answering in a millisecond without a queue gets about
// 192, a distant one whose latency is all distance keeps the bound; errors
// still halve it.
func TestConcurrencyBound(t *testing.T) {
	t.Run("loopback: the latency is our own queue", func(t *testing.T) {
		c := NewConcurrency(2048)
		c.SetRate(3e6)
		at := feed(c, t0, time.Second, 100, time.Millisecond, 2, 0)
		feed(c, at, 10*time.Second, 60000, 80*time.Millisecond, 480, 0)
		// 6,000/s × 1 ms × 1.5 + 192
		if got := c.Limit(); got != 201 {
			t.Fatalf("limit %d, want 201", got)
		}
	})
	t.Run("distant server: the latency is distance", func(t *testing.T) {
		c := NewConcurrency(512)
		c.SetRate(1e4)
		at := feed(c, t0, 10*time.Second, 25600, 200*time.Millisecond, 512, 0)
		if got := c.Limit(); got != 512 {
			t.Fatalf("limit %d, want the bound 512", got)
		}
		// One round (a latency long) of errors halves it.
		feed(c, at, 250*time.Millisecond, 640, 200*time.Millisecond, 512, 0.5)
		if got := c.Limit(); got != 256 {
			t.Fatalf("errors: limit %d, want 256", got)
		}
	})
}

// TestPacerWindows: at most the limit in flight, at most twice it claimed
// and not recorded; the windows follow the limit as it changes.
func TestPacerWindows(t *testing.T) {
	clk := clock.NewSim(t0)
	p := newPacer(clk, 4)
	ctx := context.Background()
	// One request alone until one is accepted.
	if n, err := p.reserve(ctx, 100); err != nil || n != 2 || p.Limit() != 1 {
		t.Fatalf("reserve before an acceptance = %d, %v, limit %d; want 2, a limit of 1", n, err, p.Limit())
	}
	p.release(2)
	p.accepted()
	if n, err := p.reserve(ctx, 100); err != nil || n != 8 {
		t.Fatalf("reserve = %d, %v; want 8 (twice the limit)", n, err)
	}
	if n := p.grab(1); n != 0 {
		t.Fatalf("grab past the window = %d", n)
	}
	starts := make([]time.Time, 4)
	if n, start, err := p.startSends(ctx, 3); err != nil || n != 3 {
		t.Fatalf("startSends(3) with a limit of 4 = %d, %v; want 3", n, err)
	} else {
		starts[0], starts[1], starts[2] = start, start, start
	}
	if n, start, err := p.startSends(ctx, 5); err != nil || n != 1 {
		t.Fatalf("startSends(5) with one place left = %d, %v; want 1", n, err)
	} else {
		starts[3] = start
	}
	started := make(chan struct{})
	go func() { p.startSends(ctx, 2); close(started) }()
	select {
	case <-started:
		t.Fatal("a fifth request started with a limit of 4")
	case <-time.After(20 * time.Millisecond):
	}
	clk.Advance(100 * time.Millisecond)
	p.endSend(starts[0], true, false)
	<-started // the freed place goes to the waiting request
	p.release(3)
	if n := p.grab(100); n != 3 {
		t.Fatalf("grab after 3 recorded = %d, want 3", n)
	}

	// Rows being recorded hand their places on to new claims only within
	// twice the limit: after a cut, fewer.
	p.mu.Lock()
	p.limit = 2
	p.mu.Unlock()
	if n := p.handOn(4); n != 0 {
		t.Fatalf("handOn(4) with 8 held and a limit of 2 = %d, want 0", n)
	}
	if n := p.handOn(8); n != 4 {
		t.Fatalf("handOn(8) with 8 held and a limit of 2 = %d, want 4", n)
	}

	// Cancelled: a waiting request takes no place and says why.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if n, _, err := p.startSends(cctx, 1); n != 0 || err == nil {
		t.Fatalf("startSends with a cancelled context = %d, %v; want 0, an error", n, err)
	}
	if n, err := p.reserve(cctx, 1); err == nil {
		t.Fatalf("reserve on a full window with a cancelled context = %d, nil", n)
	}
}

// TestPacerRequestEndWakesNoClaim: a request ending frees a place in
// flight, not in the window of claims, so it must not wake the loop
// waiting to claim (which the recorder's claims keep full); a recorded row
// does.
func TestPacerRequestEndWakesNoClaim(t *testing.T) {
	clk := clock.NewSim(t0)
	p := newPacer(clk, 4)
	p.accepted()
	ctx := context.Background()
	if n, err := p.reserve(ctx, 100); err != nil || n != 8 {
		t.Fatalf("reserve = %d, %v; want 8 (twice the limit)", n, err)
	}
	n, start, err := p.startSends(ctx, 1)
	if err != nil || n != 1 {
		t.Fatalf("startSends = %d, %v; want 1", n, err)
	}
	p.mu.Lock()
	wake := p.claimRoom.wait() // what a waiting reserve waits on
	p.mu.Unlock()
	p.endSend(start, true, false)
	select {
	case <-wake:
		t.Fatal("a request ending woke the claims' waiters")
	default:
	}
	p.release(1)
	select {
	case <-wake:
	default:
		t.Fatal("a recorded row did not wake the claims' waiters")
	}
}
