package ratelimit

import (
	"math"
	"testing"
	"time"
)

// TestReaction steps one account's reaction through answers at named
// instants. Each step gives n answers at its instant, every every-th of
// them throttled (0: none), and wants the last verdict among them.
func TestReaction(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const base = 30 * time.Second
	type step struct {
		at         time.Duration
		n, every   int
		hint       time.Duration
		wantFactor float64 // of the last verdict that set one in the step; 0: none
		wantRest   time.Duration
	}
	tests := []struct {
		name      string
		steps     []step
		wantNoise float64
	}{
		{"quiet answers change nothing", []step{
			{at: 0, n: 500},
			{at: time.Minute, n: 500},
		}, 0},
		{"a retry hint is a rest of its length, the rate kept", []step{
			{at: 0, n: 1, every: 1, hint: 7 * time.Second, wantRest: 7 * time.Second},
		}, 0},
		{"a burst throttled within its second is no block", []step{
			{at: 0, n: BlockedRun + 2, every: 1},
		}, 0},
		{"a run past a second rests, doubling up to 4 times", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1, every: 1, wantRest: 2 * base},
			{at: 91 * time.Second, n: 1, every: 1, wantRest: 4 * base},
			{at: 211 * time.Second, n: 1, every: 1, wantRest: 4 * base},
		}, 0},
		{"a long burst, then a block: its first rest is the first", []step{
			{at: 0, n: 4 * BlockedRun, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1, every: 1, wantRest: 2 * base},
		}, 0},
		{"a hint wins over the block's rest", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: 2 * time.Second, n: 1, every: 1, hint: 3 * time.Second, wantRest: 3 * time.Second},
		}, 0},
		{"an answer ends the block", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1},
			{at: 32 * time.Second, n: 1, every: 1},
		}, 0},
		{"a share above the noise probes a lower rate", []step{
			{at: 0, n: FastAnswers, every: 3, wantFactor: ProbeDrop},
		}, 0},
		{"a share that falls with the rate holds below the ceiling it shows", []step{
			// 1 in 3 throttled at the full rate: the server took 2/3 of it.
			{at: 0, n: FastAnswers, every: 3, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, wantFactor: HoldMargin * 2.0 / 3},
		}, 0},
		{"a ceiling below the probe too holds below what both show", []step{
			// 2 in 3 throttled at the full rate (it took 1/3 of the
			// rate), half at 0.7 (it took 0.35): the lower one counts.
			{at: 0, n: FastAnswers, every: -3, wantFactor: ProbeDrop},
			{at: 2 * time.Second, n: FastAnswers, every: 2, wantFactor: HoldMargin / 3},
		}, 0},
		{"a share that does not fall is noise: the rate comes back, the noise is learnt", []step{
			{at: 0, n: 100, every: 20},
			{at: time.Second, n: 100, every: 20, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, every: 20, wantFactor: 1},
		}, 0.05},
		{"the noise learnt is not probed again", []step{
			{at: 0, n: 100, every: 20},
			{at: time.Second, n: 100, every: 20, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, every: 20, wantFactor: 1},
			{at: 20 * time.Second, n: 10 * WindowAnswers, every: 20},
		}, 0.05},
		{"a slow account is judged after WindowTime", []step{
			{at: 0, n: 1},
			{at: time.Second, n: 1, every: 1},
			{at: 2 * time.Second, n: 1, every: 1},
			{at: WindowTime, n: 1, every: 1, wantFactor: ProbeDrop},
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReaction(1, t0)
			for i, s := range tc.steps {
				at := t0.Add(s.at)
				var got Verdict
				for j := range s.n {
					throttled := s.every > 0 && j%s.every == s.every-1 || s.every < 0 && j%-s.every != 0
					v := r.Answer(at, throttled, s.hint, base)
					if v.Factor > 0 {
						got.Factor = v.Factor
					}
					if v.Rest > 0 || j == s.n-1 {
						got.Rest = v.Rest
					}
				}
				if math.Abs(got.Factor-s.wantFactor) > 1e-9 || got.Rest != s.wantRest {
					t.Errorf("step %d at +%v: verdict %+v, want factor %v rest %v", i, s.at, got, s.wantFactor, s.wantRest)
				}
			}
			if math.Abs(r.Noise()-tc.wantNoise) > 1e-9 {
				t.Errorf("noise learnt %v, want %v", r.Noise(), tc.wantNoise)
			}
		})
	}
}
