package ratelimit

import (
	"math"
	"testing"
	"time"
)

// TestHealthReacted steps an account through a reaction's verdicts at named
// instants: a factor is set from its instant, a rest never shortens one
// already running, and a verdict without a factor keeps the factor.
func TestHealthReacted(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		name       string
		at         time.Duration
		factor     float64
		rest       time.Duration
		wantUntil  time.Duration // from t0; 0: never rested
		wantFactor float64
		wantStreak int
	}{
		{"a factor alone", 0, 0.7, 0, 0, 0.7, 0},
		{"a rest alone keeps the factor", 10 * time.Second, 0, 30 * time.Second, 40 * time.Second, 0.7, 1},
		{"a shorter rest within it keeps the later end", 20 * time.Second, 0, 5 * time.Second, 40 * time.Second, 0.7, 2},
		{"a longer one moves it", 30 * time.Second, 0, time.Minute, 90 * time.Second, 0.7, 3},
		{"a new factor starts the streak over", 40 * time.Second, 0.5, 0, 90 * time.Second, 0.5, 0},
		{"a factor of 1 or more is the full rate", 50 * time.Second, 1.5, 0, 90 * time.Second, 1, 0},
	}
	var h Health
	for _, s := range steps {
		h = h.Reacted(at(s.at), s.factor, s.rest)
		if s.wantUntil == 0 && !h.CooldownUntil.IsZero() || s.wantUntil != 0 && !h.CooldownUntil.Equal(at(s.wantUntil)) {
			t.Errorf("%s: rests until %v, want +%v", s.name, h.CooldownUntil, s.wantUntil)
		}
		if got := h.FactorAt(at(s.at)); math.Abs(got-s.wantFactor) > 1e-9 {
			t.Errorf("%s: factor %v, want %v", s.name, got, s.wantFactor)
		}
		if h.Streak != s.wantStreak {
			t.Errorf("%s: streak %d, want %d", s.name, h.Streak, s.wantStreak)
		}
	}
}

// TestHealthRecovery: after a lowered factor is set it holds for
// QuietPeriod, then climbs RecoveryStep per QuietPeriod back to 1.
func TestHealthRecovery(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := Health{}.Reacted(t0, 0.5, 30*time.Second)
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
	// A verdict during recovery sets the factor from then on, and its
	// recovery starts over.
	h2 := h.Reacted(t0.Add(2*QuietPeriod), 0.3, 0)
	if got := h2.FactorAt(t0.Add(3 * QuietPeriod)); math.Abs(got-0.3) > 1e-9 {
		t.Errorf("factor a quiet period after a verdict of 0.3 = %v, want 0.3", got)
	}
	// The zero Health is full rate.
	if got := (Health{}).FactorAt(t0); got != 1 {
		t.Errorf("fresh account factor %v, want 1", got)
	}
	l := Health{}.Reacted(t0, 0.5, time.Second).Scale(Limit{Rate: 4, Burst: 3}, t0)
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
