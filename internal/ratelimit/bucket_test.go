package ratelimit

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// t0 is the first named instant of every step table; the others are offsets
// from it, so a table reads like a timeline.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const tokenTolerance = 1e-9

func closeTo(a, b float64) bool { return math.Abs(a-b) <= tokenTolerance }

// step is one TakeAt at a named instant, in the manner of x/time/rate's
// tests. wantTokens is what the bucket holds at that instant after the step.
type step struct {
	at         time.Duration
	wantTokens float64
	n          float64
	wantOK     bool
}

func runSteps(t *testing.T, l Limit, b Bucket, steps []step) Bucket {
	t.Helper()
	for i, s := range steps {
		now := at(s.at)
		got, ok := b.TakeAt(l, now, s.n)
		if ok != s.wantOK {
			t.Fatalf("step %d: TakeAt(%v, %v) ok = %v, want %v (tokens before %v)", i, s.at, s.n, ok, s.wantOK, b.TokensAt(l, now))
		}
		if !ok && got != b {
			t.Fatalf("step %d: a refused TakeAt changed the bucket: %+v -> %+v", i, b, got)
		}
		b = got
		if tok := b.TokensAt(l, now); !closeTo(tok, s.wantTokens) {
			t.Fatalf("step %d: tokens at %v = %v, want %v", i, s.at, tok, s.wantTokens)
		}
	}
	return b
}

func TestTakeAt(t *testing.T) {
	tests := []struct {
		name  string
		limit Limit
		start Bucket
		steps []step
	}{
		{
			name:  "burst drains then refills at rate",
			limit: Limit{Rate: 1, Burst: 3},
			start: Full(Limit{Rate: 1, Burst: 3}, t0),
			steps: []step{
				{0, 2, 1, true},
				{0, 1, 1, true},
				{0, 0, 1, true},
				{0, 0, 1, false},
				{500 * time.Millisecond, 0.5, 1, false},
				{time.Second, 0, 1, true},
				{time.Second, 0, 1, false},
				{2 * time.Second, 0, 1, true},
				{4 * time.Second, 1, 1, true},
				{4 * time.Second, 0, 1, true},
			},
		},
		{
			name:  "partial tokens accumulate and can be taken",
			limit: Limit{Rate: 0.5, Burst: 2},
			start: Bucket{Tokens: 0, At: t0},
			steps: []step{
				{time.Second, 0.5, 1, false},
				{time.Second, 0, 0.5, true},
				{2 * time.Second, 0.5, 1, false},
				{3 * time.Second, 0, 1, true},
				{3500 * time.Millisecond, 0.25, 1, false},
				{3500 * time.Millisecond, 0.05, 0.2, true},
			},
		},
		{
			name:  "a long idle refills to burst, not beyond",
			limit: Every(12*time.Second, 5),
			start: Bucket{Tokens: 0, At: t0},
			steps: []step{
				{24 * time.Hour, 5, 0, true},
				{24 * time.Hour, 0, 5, true},
				{24 * time.Hour, 0, 1, false},
				{24*time.Hour + 11*time.Second, 11.0 / 12, 1, false},
				{24*time.Hour + 12*time.Second, 0, 1, true},
			},
		},
		{
			name:  "more than the burst is never granted",
			limit: Limit{Rate: 1, Burst: 2},
			start: Full(Limit{Rate: 1, Burst: 2}, t0),
			steps: []step{
				{0, 2, 3, false},
				{time.Hour, 2, 3, false},
				{time.Hour, 0, 2, true},
			},
		},
		{
			name:  "clock going backwards earns nothing and loses nothing",
			limit: Limit{Rate: 1, Burst: 10},
			start: Bucket{Tokens: 2, At: at(10 * time.Second)},
			steps: []step{
				{5 * time.Second, 2, 0, true},  // no refill before At
				{5 * time.Second, 1, 1, true},  // the tokens there are usable
				{10 * time.Second, 1, 0, true}, // nothing earned between 5s and 10s
				// 12s: 1 + 2 earned since At=10s. Had At moved back to 5s the
				// interval 5s..10s would be paid twice: 8.
				{12 * time.Second, 3, 0, true},
				{3 * time.Second, 2, 1, true},
				{13 * time.Second, 3, 0, true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, tt.limit, tt.start, tt.steps)
		})
	}
}

func TestSettleNeverMovesAtBack(t *testing.T) {
	l := Limit{Rate: 1, Burst: 5}
	b := Bucket{Tokens: 1, At: at(time.Minute)}
	for _, d := range []time.Duration{0, 30 * time.Second, time.Minute - time.Nanosecond} {
		s := b.Settle(l, at(d))
		if !s.At.Equal(b.At) || s.Tokens != b.Tokens {
			t.Errorf("Settle(%v) = %+v, want %+v unchanged", d, s, b)
		}
		if got, ok := b.TakeAt(l, at(d), 1); !ok || !got.At.Equal(b.At) || got.Tokens != 0 {
			t.Errorf("TakeAt(%v) = %+v, %v; want tokens 0 at the old At", d, got, ok)
		}
	}
	if s := b.Settle(l, at(2*time.Minute)); !s.At.Equal(at(2*time.Minute)) || s.Tokens != 5 {
		t.Errorf("Settle forward = %+v, want 5 tokens at +2m", s)
	}
}

func TestReadyAt(t *testing.T) {
	tests := []struct {
		name   string
		limit  Limit
		bucket Bucket
		t      time.Duration
		n      float64
		want   time.Duration // offset from t0; ignored when never
		never  bool
	}{
		{name: "full bucket is ready now", limit: Every(12*time.Second, 5), bucket: Full(Every(12*time.Second, 5), t0), t: 3 * time.Second, n: 5, want: 3 * time.Second},
		{name: "one token after one interval", limit: Every(12*time.Second, 5), bucket: Bucket{0, t0}, n: 1, want: 12 * time.Second},
		{name: "two tokens after two intervals", limit: Every(12*time.Second, 5), bucket: Bucket{0, t0}, n: 2, want: 24 * time.Second},
		{name: "partial token shortens the wait", limit: Every(12*time.Second, 5), bucket: Bucket{0.25, t0}, n: 1, want: 9 * time.Second},
		{name: "asked later, still counted from At", limit: Every(8*time.Second, 8), bucket: Bucket{0, t0}, t: 5 * time.Second, n: 1, want: 8 * time.Second},
		{name: "rounded up to the nanosecond", limit: Limit{Rate: 3, Burst: 2}, bucket: Bucket{0, t0}, n: 1, want: 333333334 * time.Nanosecond},
		{name: "rounded up for two", limit: Limit{Rate: 3, Burst: 2}, bucket: Bucket{0, t0}, n: 2, want: 666666667 * time.Nanosecond},
		{name: "active tier", limit: Every(5*time.Second, 15), bucket: Bucket{0.25, t0}, n: 1, want: 3750 * time.Millisecond},
		{name: "more than burst never", limit: Limit{Rate: 1, Burst: 2}, bucket: Bucket{0, t0}, n: 3, never: true},
		{name: "zero rate never", limit: Limit{Rate: 0, Burst: 2}, bucket: Bucket{0, t0}, n: 1, never: true},
		{name: "clock behind, tokens short: counted from At", limit: Limit{Rate: 1, Burst: 5}, bucket: Bucket{0.5, at(10 * time.Second)}, t: 4 * time.Second, n: 1, want: 10500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.bucket.ReadyAt(tt.limit, at(tt.t), tt.n)
			if tt.never {
				if !got.IsZero() {
					t.Fatalf("ReadyAt = %v, want the zero time", got)
				}
				return
			}
			if want := at(tt.want); !got.Equal(want) {
				t.Fatalf("ReadyAt = +%v, want +%v", got.Sub(t0), tt.want)
			}
			// Exact: TakeAt succeeds at the instant ReadyAt names, and when
			// there was a wait the tokens were still short a nanosecond before.
			if _, ok := tt.bucket.TakeAt(tt.limit, got, tt.n); !ok {
				t.Errorf("TakeAt(ReadyAt) refused")
			}
			if got.After(at(tt.t)) && got.After(tt.bucket.At) {
				if tok := tt.bucket.TokensAt(tt.limit, got.Add(-time.Nanosecond)); tok >= tt.n {
					t.Errorf("already %v tokens at ReadyAt-1ns: ReadyAt is late", tok)
				}
			}
		})
	}
}

// BUG (bucket.go:84): when the caller's clock is behind At and the bucket
// already holds n tokens, ReadyAt returns At instead of t, although TakeAt(t)
// succeeds. Pick then reports ReasonTokens for an account that has tokens,
// so a process whose clock is behind the one that last spent a token waits
// for the other's clock (with a busy second host, indefinitely).
func TestReadyAtClockBehindWithTokensIsNow(t *testing.T) {
	l := Limit{Rate: 1, Burst: 5}
	b := Bucket{Tokens: 3, At: at(10 * time.Second)}
	now := at(4 * time.Second)
	if _, ok := b.TakeAt(l, now, 1); !ok {
		t.Fatal("TakeAt refused a bucket holding 3 tokens")
	}
	if got := b.ReadyAt(l, now, 1); !got.Equal(now) {
		t.Errorf("ReadyAt = +%v, want +%v: the tokens are there now", got.Sub(t0), now.Sub(t0))
	}
	if d := Pick(now, []Candidate{{Limit: l, Bucket: b, DailyCap: 10}}, nil, Limit{}); d.Index != 0 {
		t.Errorf("Pick = %+v, want the account holding tokens", d)
	}
}

func TestRelimit(t *testing.T) {
	tests := []struct {
		name     string
		old, new Limit
		start    Bucket
		change   time.Duration // when Relimit runs
		want     float64       // tokens right after the change
		later    time.Duration
		wantLate float64 // tokens at later under the new limit
	}{
		{
			name: "lowering the rate keeps tokens earned at the old rate",
			old:  Limit{Rate: 1, Burst: 10}, new: Limit{Rate: 0.1, Burst: 10},
			start: Bucket{0, t0}, change: 4 * time.Second, want: 4,
			later: 14 * time.Second, wantLate: 5,
		},
		{
			name: "raising the rate grants nothing retroactively",
			old:  Limit{Rate: 0.1, Burst: 10}, new: Limit{Rate: 1, Burst: 10},
			start: Bucket{0, t0}, change: 10 * time.Second, want: 1,
			later: 12 * time.Second, wantLate: 3,
		},
		{
			name: "a shrinking burst caps the tokens",
			old:  Limit{Rate: 1, Burst: 10}, new: Limit{Rate: 1, Burst: 5},
			start: Bucket{8, t0}, change: time.Second, want: 5,
			later: time.Hour, wantLate: 5,
		},
		{
			name: "a growing burst is filled only from now on",
			old:  Limit{Rate: 1, Burst: 5}, new: Limit{Rate: 1, Burst: 10},
			start: Bucket{5, t0}, change: 100 * time.Second, want: 5,
			later: 102 * time.Second, wantLate: 7,
		},
		{
			name: "a change with the clock behind keeps At",
			old:  Limit{Rate: 1, Burst: 10}, new: Limit{Rate: 2, Burst: 10},
			start: Bucket{2, at(10 * time.Second)}, change: 5 * time.Second, want: 2,
			later: 11 * time.Second, wantLate: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.start.Relimit(tt.old, tt.new, at(tt.change))
			if !closeTo(b.Tokens, tt.want) {
				t.Errorf("tokens after Relimit = %v, want %v", b.Tokens, tt.want)
			}
			if b.At.Before(tt.start.At) {
				t.Errorf("At moved back: %v -> %v", tt.start.At, b.At)
			}
			if got := b.TokensAt(tt.new, at(tt.later)); !closeTo(got, tt.wantLate) {
				t.Errorf("tokens at +%v = %v, want %v", tt.later, got, tt.wantLate)
			}
		})
	}
}

func TestEvery(t *testing.T) {
	l := Every(12*time.Second, 5)
	if l.Burst != 5 || !closeTo(l.Rate, 1.0/12) {
		t.Fatalf("Every(12s, 5) = %+v", l)
	}
	if got := Every(500*time.Millisecond, 1); got.Rate != 2 || got.Burst != 1 {
		t.Errorf("Every(500ms, 1) = %+v", got)
	}
	// Exactly one token per 12 seconds from empty, in step form.
	runSteps(t, l, Bucket{0, t0}, []step{
		{11 * time.Second, 11.0 / 12, 1, false},
		{12 * time.Second, 0, 1, true},
		{23 * time.Second, 11.0 / 12, 1, false},
		{24 * time.Second, 0, 1, true},
		{84 * time.Second, 0, 5, true},
	})
}

// TestTakeAtNeverExceedsRate drives random buckets with random takes at
// non-decreasing instants (some exactly at ReadyAt) and checks the token
// bucket's defining bound: in any window [a, b] at most burst + rate·(b−a)
// tokens are taken.
func TestTakeAtNeverExceedsRate(t *testing.T) {
	type take struct {
		at time.Time
		n  float64
	}
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		l := Limit{Rate: 0.05 + r.Float64()*5, Burst: 1 + r.IntN(10)}
		b := Full(l, t0)
		if r.IntN(2) == 0 {
			b.Tokens = r.Float64() * float64(l.Burst)
		}
		now := t0
		var taken []take
		for range 300 {
			switch r.IntN(4) {
			case 0: // exactly when a token is due
				if ready := b.ReadyAt(l, now, 1); ready.After(now) {
					now = ready
				}
			case 1: // same instant again
			default:
				now = now.Add(time.Duration(r.Float64() * 2 / l.Rate * float64(time.Second)))
			}
			n := 1.0
			if r.IntN(5) == 0 {
				n = float64(1+r.IntN(l.Burst)) * (0.5 + r.Float64()/2)
			}
			ready := b.ReadyAt(l, now, n)
			nb, ok := b.TakeAt(l, now, n)
			if ok {
				taken = append(taken, take{now, n})
				b = nb
			}
			if !ready.After(now) && !ok {
				t.Fatalf("seed %d: ReadyAt said %v is ready but TakeAt(%v) refused", seed, n, now.Sub(t0))
			}
		}
		for i := range taken {
			sum := 0.0
			for j := i; j < len(taken); j++ {
				sum += taken[j].n
				window := taken[j].at.Sub(taken[i].at).Seconds()
				if limit := float64(l.Burst) + l.Rate*window + 1e-6; sum > limit {
					t.Fatalf("seed %d (%+v): %v tokens taken in [%v, %v], bound %v",
						seed, l, sum, taken[i].at.Sub(t0), taken[j].at.Sub(t0), limit)
				}
			}
		}
	}
}
