package ratelimit

import (
	"math"
	"testing"
	"time"
)

// TestHealthThrottles steps an account through throttles at named instants:
// cool-downs grow 30 s, 60 s, 120 s and stop at 4×; a hint wins; a quiet
// spell past StreakReset starts over. The rate halves each time, not below
// MinFactor.
func TestHealthThrottles(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const base = 30 * time.Second
	steps := []struct {
		name       string
		at         time.Duration
		hint       time.Duration
		wantUntil  time.Duration
		wantFactor float64
		wantStreak int
	}{
		{"first throttle rests the base", 0, 0, 30 * time.Second, 0.5, 1},
		{"second doubles", 40 * time.Second, 0, 40*time.Second + 60*time.Second, 0.25, 2},
		{"third doubles again", 80 * time.Second, 0, 80*time.Second + 120*time.Second, 0.125, 3},
		{"fourth stays at 4× and the floor", 120 * time.Second, 0, 120*time.Second + 120*time.Second, MinFactor, 4},
		{"a hint within the cool-down keeps the later end", 150 * time.Second, 7 * time.Second, 240 * time.Second, MinFactor, 5},
		{"after a quiet spell it starts over", 30 * time.Minute, 0, 30*time.Minute + 30*time.Second, 0.5, 1},
		{"a server hint wins over the computed rest", 30*time.Minute + 40*time.Second, 7 * time.Second, 30*time.Minute + 47*time.Second, 0.25, 2},
	}
	var h Health
	for _, s := range steps {
		h = h.Throttled(at(s.at), base, s.hint)
		if !h.CooldownUntil.Equal(at(s.wantUntil)) {
			t.Errorf("%s: rests until +%v, want +%v", s.name, h.CooldownUntil.Sub(t0), s.wantUntil)
		}
		if got := h.FactorAt(at(s.at)); math.Abs(got-s.wantFactor) > 1e-9 {
			t.Errorf("%s: factor %v, want %v", s.name, got, s.wantFactor)
		}
		if h.Streak != s.wantStreak {
			t.Errorf("%s: streak %d, want %d", s.name, h.Streak, s.wantStreak)
		}
	}
}

// TestHealthRecovery: after a throttle the factor holds for QuietPeriod,
// then climbs RecoveryStep per QuietPeriod back to 1.
func TestHealthRecovery(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := Health{}.Throttled(t0, 30*time.Second, 0) // factor 0.5
	steps := []struct {
		after time.Duration
		want  float64
	}{
		{0, 0.5},
		{QuietPeriod, 0.5},
		{QuietPeriod + QuietPeriod/2, 0.55},
		{2 * QuietPeriod, 0.6},
		{6 * QuietPeriod, 1},
		{time.Hour, 1},
	}
	for _, s := range steps {
		if got := h.FactorAt(t0.Add(s.after)); math.Abs(got-s.want) > 1e-9 {
			t.Errorf("factor after %v = %v, want %v", s.after, got, s.want)
		}
	}
	if !h.Demoted(t0.Add(2*QuietPeriod)) || h.Demoted(t0.Add(6*QuietPeriod)) {
		t.Error("demoted while below full rate, and only then")
	}
	// A throttle during recovery halves what was reached, not the old value.
	h2 := h.Throttled(t0.Add(2*QuietPeriod), 30*time.Second, 0)
	if got := h2.FactorAt(t0.Add(2 * QuietPeriod)); math.Abs(got-0.3) > 1e-9 {
		t.Errorf("factor after a throttle at 0.6 = %v, want 0.3", got)
	}
	// The zero Health is full rate.
	if got := (Health{}).FactorAt(t0); got != 1 {
		t.Errorf("fresh account factor %v, want 1", got)
	}
	l := Health{}.Throttled(t0, time.Second, 0).Scale(Limit{Rate: 4, Burst: 3}, t0)
	if l.Rate != 2 || l.Burst != 3 {
		t.Errorf("scaled limit %+v, want rate 2 burst 3", l)
	}
}

// TestPickPrefersHealthy: a demoted account is chosen only when no healthy
// one has a token.
func TestPickPrefersHealthy(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	l := Limit{Rate: 1, Burst: 2}
	cands := []Candidate{
		{Limit: l, Bucket: Full(l, t0), DailyCap: 10, Demoted: true},
		{Limit: l, Bucket: Bucket{Tokens: 1, At: t0}, DailyCap: 10},
	}
	if d := Pick(t0, cands, nil, Limit{}); d.Index != 1 {
		t.Fatalf("picked %d, want the healthy account 1 although its bucket is emptier", d.Index)
	}
	cands[1].Bucket = Bucket{Tokens: 0, At: t0}
	if d := Pick(t0, cands, nil, Limit{}); d.Index != 0 {
		t.Fatalf("picked %d, want the demoted account when the healthy one has no token", d.Index)
	}
}
