package ratelimit

import (
	"math"
	"testing"
	"time"
)

// TestReaction steps one account's reaction through answers at named
// instants. Each step gives n answers at its instant, every every-th of
// them throttled (0: none), and wants the last verdict among them. The
// reaction has seen its first throttle (past the start) unless fresh.
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
		fresh     bool // a reaction that has seen nothing yet
	}{
		{"quiet answers change nothing", []step{
			{at: 0, n: 500},
			{at: time.Minute, n: 500},
		}, 0, false},
		{"a retry hint is a rest of its length, the rate kept", []step{
			{at: 0, n: 1, every: 1, hint: 7 * time.Second, wantRest: 7 * time.Second},
		}, 0, false},
		{"a burst throttled within its second is no block", []step{
			{at: 0, n: BlockedRun + 2, every: 1},
		}, 0, false},
		{"a burst throttled within its second counts in the window", []step{
			{at: 0, n: 2 * BlockedRun, every: 1},
			{at: time.Second / 2, n: FastAnswers - 2*BlockedRun, wantFactor: ProbeDrop},
		}, 0, false},
		{"a run past a second rests, doubling up to 4 times", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1, every: 1, wantRest: 2 * base},
			{at: 91 * time.Second, n: 1, every: 1, wantRest: 4 * base},
			{at: 211 * time.Second, n: 1, every: 1, wantRest: 4 * base},
		}, 0, false},
		{"a long burst, then a block: its first rest is the first", []step{
			{at: 0, n: 4 * BlockedRun, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1, every: 1, wantRest: 2 * base},
		}, 0, false},
		{"a hint wins over the block's rest", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: 2 * time.Second, n: 1, every: 1, hint: 3 * time.Second, wantRest: 3 * time.Second},
		}, 0, false},
		{"an answer ends the block", []step{
			{at: 0, n: BlockedRun - 1, every: 1},
			{at: time.Second, n: 1, every: 1, wantRest: base},
			{at: 31 * time.Second, n: 1},
			{at: 32 * time.Second, n: 1, every: 1},
		}, 0, false},
		{"a share above the noise probes a lower rate", []step{
			{at: 0, n: FastAnswers, every: 3, wantFactor: ProbeDrop},
		}, 0, false},
		{"a share that falls with the rate holds below the ceiling it shows", []step{
			// 1 in 5 throttled at the full rate: the server took 4/5 of
			// it, and all of 0.7.
			{at: 0, n: FastAnswers, every: 5, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, wantFactor: HoldMargin * 4.0 / 5},
		}, 0, false},
		{"a probe the server took whole holds below it", []step{
			// 1 in 3 throttled at the full rate says 2/3, but the
			// server took all of 0.7: at least that.
			{at: 0, n: FastAnswers, every: 3, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, wantFactor: HoldMargin * ProbeDrop},
		}, 0, false},
		{"a ceiling below the probe too holds below what the probe shows", []step{
			// 2 in 3 throttled at the full rate (it took 1/3 of the
			// rate), half at 0.7 (it took 0.35): the window nearer the
			// ceiling counts.
			{at: 0, n: FastAnswers, every: -3, wantFactor: ProbeDrop},
			{at: 2 * time.Second, n: FastAnswers, every: 2, wantFactor: HoldMargin * ProbeDrop / 2},
		}, 0, false},
		{"a share that does not fall is noise: the rate comes back, the noise is learnt", []step{
			{at: 0, n: 100, every: 20},
			{at: time.Second, n: 100, every: 20, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, every: 20, wantFactor: 1},
		}, 0.05, false},
		{"the noise learnt is not probed again", []step{
			{at: 0, n: 100, every: 20},
			{at: time.Second, n: 100, every: 20, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, every: 20, wantFactor: 1},
			{at: 20 * time.Second, n: 10 * WindowAnswers, every: 20},
		}, 0.05, false},
		{"a slow account is judged after WindowTime", []step{
			{at: 0, n: 1},
			{at: time.Second, n: 1, every: 1},
			{at: 2 * time.Second, n: 1, every: 1},
			{at: WindowTime, n: 1, every: 1, wantFactor: ProbeDrop},
		}, 0, false},
		{"at the start, the server's burst before the first throttle is not counted", []step{
			// The server took 20 requests, then 2 in 3: a ceiling of
			// 2/3 of the rate, not the 5/6 the first 36 answers show.
			{at: 0, n: 20},
			{at: 0, n: 1, every: 1},
			{at: 0, n: FastAnswers, every: 3, wantFactor: ProbeDrop},
			// At 0.7, 1 in 21, judged early at its 6th throttle: the
			// server took 2/3.
			{at: 10 * time.Second, n: WindowAnswers, every: 21, wantFactor: HoldMargin * ProbeDrop * (1 - 6.0/126)},
		}, 0, true},
		{"at the start, the answers before the first throttle count for half a fast window", []step{
			{at: 0, n: 20},
			{at: 0, n: 1, every: 1},
			{at: time.Second, n: FastAnswers / 2, every: 2, wantFactor: ProbeDrop},
		}, 0, true},
		{"at the start, half a fast window past the first throttle is not enough alone", []step{
			{at: 0, n: 1, every: 1},
			{at: time.Second, n: FastAnswers / 2, every: 2},
			{at: 2 * time.Second, n: FastAnswers / 2, every: 2, wantFactor: ProbeDrop},
		}, 0, true},
		{"at the start, quiet answers change nothing", []step{
			{at: 0, n: 500},
			{at: WindowTime, n: 500},
		}, 0, true},
		{"at the start, the first throttle is not counted: noise looks no larger", []step{
			{at: 0, n: 1, every: 1},
			{at: time.Second, n: 100, every: 20},
			{at: 2 * time.Second, n: 100, every: 20, wantFactor: ProbeDrop},
			{at: 10 * time.Second, n: WindowAnswers, every: 20, wantFactor: 1},
		}, 0.05, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReaction(1, t0)
			r.started = !tc.fresh
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

// TestJudgeProbe holds the probe's verdicts on windows given outright: at
// the full rate (hi) and at ProbeDrop of it (lo).
func TestJudgeProbe(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		hi, lo    tally
		noise     float64
		want      float64
		wantNoise float64
	}{
		{"the share falls to what a ceiling leaves: hold 0.95 of it",
			tally{answers: 300, throttled: 60}, tally{answers: 200, throttled: 0}, 0, HoldMargin * 4.0 / 5, 0},
		{"the share falls to the noise at a probe above that ceiling: hold 0.95 of what the probe took",
			tally{answers: 300, throttled: 100}, tally{answers: 200, throttled: 4}, 0, HoldMargin * ProbeDrop * 0.98, 0},
		{"the share falls further than the first window's ceiling says (a burst of the start in it): the probe measures it",
			tally{answers: 15, throttled: 15}, tally{answers: 200, throttled: 10}, 0, HoldMargin * ProbeDrop * 0.95, 0},
		{"still throttled at the probe: the lower of the two ceilings",
			tally{answers: 300, throttled: 100}, tally{answers: 200, throttled: 10}, 0, HoldMargin * ProbeDrop * 0.95, 0},
		{"a ceiling below the probe: the lower window measures it",
			tally{answers: 300, throttled: 200}, tally{answers: 200, throttled: 110}, 0, HoldMargin * ProbeDrop * 0.45, 0},
		{"the same share at both rates is noise: the rate comes back",
			tally{answers: 200, throttled: 6}, tally{answers: 200, throttled: 5}, 0, 1, 11.0 / 400},
		{"noise above MaxNoise is learnt as MaxNoise",
			tally{answers: 200, throttled: 20}, tally{answers: 200, throttled: 19}, 0, 1, MaxNoise},
		{"a share that falls less than a ceiling says, still high: keep the lower rate (another host sends too)",
			tally{answers: 300, throttled: 100}, tally{answers: 200, throttled: 44}, 0, ProbeDrop, 0},
		{"a small fall within the draws' spread is noise",
			tally{answers: 60, throttled: 6}, tally{answers: 200, throttled: 10}, 0, 1, 16.0 / 260},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Reaction{hi: tc.hi, hiF: 1, probing: true, noise: tc.noise, win: tc.lo}
			r.h = Health{Factor: ProbeDrop, FactorSince: t0}
			got := r.judgeProbe(t0)
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("factor %v, want %v", got, tc.want)
			}
			if math.Abs(r.noise-min(tc.wantNoise, MaxNoise)) > 1e-9 {
				t.Errorf("noise %v, want %v", r.noise, tc.wantNoise)
			}
			if r.probing {
				t.Error("still probing after the verdict")
			}
		})
	}
}

// TestReactionJSON: a reaction kept as JSON (as hosts sharing it keep it)
// and read back is the same reaction: mid-probe, with noise learned, both
// copies give the same verdicts to the same answers.
func TestReactionJSON(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	r := NewReaction(1, t0)
	var as []Answered
	for i := range 400 {
		as = append(as, Answered{At: t0.Add(time.Duration(i) * 50 * time.Millisecond), Throttled: i%25 == 0})
	}
	r.Feed(as) // a probe, noise learned, and a second window under way
	r.Feed([]Answered{{At: t0.Add(30 * time.Second), Throttled: true}})
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Reaction
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if back != r {
		t.Fatalf("read back %+v; want %+v", back, r)
	}
	for i := range 600 {
		at, thr := t0.Add(31*time.Second+time.Duration(i)*40*time.Millisecond), i%3 == 0
		if v, w := r.Answer(at, thr, 0, time.Second), back.Answer(at, thr, 0, time.Second); v != w {
			t.Fatalf("answer %d: %+v and %+v", i, v, w)
		}
	}
	if r.Noise() == 0 {
		t.Error("no noise learned: the test does not hold what it says")
	}

	// At the start: the answers before the first throttle, and that it
	// came, are kept too.
	start := NewReaction(1, t0)
	for i := range 21 {
		start.Answer(t0.Add(time.Duration(i)*time.Millisecond), i == 20, 0, time.Second)
	}
	b, err = start.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back = Reaction{}
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if back != start || !back.started || back.pre != 20 {
		t.Fatalf("read back %+v; want %+v", back, start)
	}
}

func TestFeedDue(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		after     time.Duration
		throttled bool
		want      bool
	}{
		{FeedSoon - 1, true, false},
		{FeedSoon, true, true},
		{FeedSoon, false, false},
		{FeedEvery - 1, false, false},
		{FeedEvery, false, true},
	}
	for _, tt := range tests {
		if got := FeedDue(t0, t0.Add(tt.after), tt.throttled); got != tt.want {
			t.Errorf("FeedDue after %v, throttled %v: %v, want %v", tt.after, tt.throttled, got, tt.want)
		}
	}
}
