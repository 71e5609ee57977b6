package ratelimit

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestReachAllowed(t *testing.T) {
	tests := []struct {
		r    Reach
		want int
	}{
		{Reach{Limit: 2000, Margin: 0.05}, 1900},
		{Reach{Limit: 250, Margin: 0.05}, 237}, // 12.5 kept back rounds up to 13
		{Reach{Limit: 10000, Margin: 0}, 10000},
		{Reach{Limit: 100000, Margin: 0.1}, 90000},
		{Reach{Limit: 3, Margin: 1}, 0},
	}
	for _, tt := range tests {
		if got := tt.r.Allowed(); got != tt.want {
			t.Errorf("%+v.Allowed() = %d, want %d", tt.r, got, tt.want)
		}
	}
	if (Reach{}).Limited() || (Reach{Limit: -1}).Limited() {
		t.Error("a reach without a limit restricts")
	}
}

// TestReachLogSteps is a timeline on a fake clock: a limit of 3, sends at
// named instants, each admitted or refused with the time room comes back.
func TestReachLogSteps(t *testing.T) {
	type send struct {
		at        time.Duration
		to        string
		wantOK    bool
		wantUntil time.Duration // when refused: offset of the instant room comes back
	}
	h := time.Hour
	tests := []struct {
		name  string
		steps []send
	}{
		{
			name: "exactly the limit, then repeats are free",
			steps: []send{
				{0, "a", true, 0},
				{1 * h, "b", true, 0},
				{2 * h, "c", true, 0},
				{3 * h, "d", false, 24 * h}, // a leaves at 24 h
				{4 * h, "a", true, 0},       // a repeat costs nothing…
				{5 * h, "b", true, 0},
				{6 * h, "d", false, 26 * h}, // …and keeps a in the window: c (2 h) is now the oldest
			},
		},
		{
			name: "the window slides",
			steps: []send{
				{0, "a", true, 0},
				{1 * h, "b", true, 0},
				{2 * h, "c", true, 0},
				{24*h - 1, "d", false, 24 * h},
				{24 * h, "d", true, 0}, // a's send is exactly 24 h old: out
				{24*h + 1, "e", false, 25 * h},
				{25 * h, "e", true, 0},
				{25 * h, "a", false, 26 * h}, // a left: it is new again and costs a unit
			},
		},
		{
			name: "a recipient gone from the window counts again",
			steps: []send{
				{0, "a", true, 0},
				{30 * h, "a", true, 0},
				{31 * h, "b", true, 0},
				{32 * h, "c", true, 0},
				{33 * h, "d", false, 54 * h},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewReachLog(Reach{Limit: 3})
			for i, s := range tt.steps {
				ok, until := l.Send(at(s.at), s.to)
				if ok != s.wantOK {
					t.Fatalf("step %d: send to %s at %v: ok = %v, want %v", i, s.to, s.at, ok, s.wantOK)
				}
				if !ok && !until.Equal(at(s.wantUntil)) {
					t.Fatalf("step %d: room again at %v, want %v", i, until.Sub(t0), s.wantUntil)
				}
			}
		})
	}
}

// sendAt is one admitted send.
type sendAt struct {
	at time.Time
	to string
}

// maxDistinct is the largest number of distinct recipients in any window
// (t-24h, t]: windows only gain a recipient at a send, so the windows
// ending at each send are the ones to look at.
func maxDistinct(sends []sendAt) int {
	sort.SliceStable(sends, func(i, j int) bool { return sends[i].at.Before(sends[j].at) })
	best, from := 0, 0
	for j := range sends {
		for !InWindow(sends[j].at, sends[from].at) {
			from++
		}
		seen := map[string]bool{}
		for _, s := range sends[from : j+1] {
			seen[s.to] = true
		}
		best = max(best, len(seen))
	}
	return best
}

// TestReachLogRandom drives the log with random recipients (many repeats)
// at random instants over five days: no window ever holds more than the
// allowed distinct recipients, the window fills up to exactly that, and a
// refused send is refused only while the window is full.
func TestReachLogRandom(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 1))
			r := Reach{Limit: 50, Margin: 0.1}
			l := NewReachLog(r)
			var sends []sendAt
			now := t0
			for range 4000 {
				now = now.Add(time.Duration(rnd.Int64N(int64(3 * time.Minute))))
				to := fmt.Sprint("+4915100", rnd.IntN(400))
				used := l.Used(now)
				ok, until := l.Send(now, to)
				if !ok {
					if used < r.Allowed() {
						t.Fatalf("refused %s at %v with %d of %d used", to, now, used, r.Allowed())
					}
					if !until.After(now) {
						t.Fatalf("refused at %v until %v", now, until)
					}
					continue
				}
				sends = append(sends, sendAt{now, to})
			}
			if got := maxDistinct(sends); got != r.Allowed() {
				t.Errorf("max distinct recipients in a 24 h window = %d, want exactly %d", got, r.Allowed())
			}
		})
	}
}

func TestReachQueueMatchesLog(t *testing.T) {
	r := Reach{Limit: 20, Margin: 0.05}
	q := NewReachQueue(r, []time.Time{at(-2 * time.Hour), at(-23 * time.Hour), at(-25 * time.Hour)})
	l := NewReachLog(r)
	l.last["old1"], l.last["old2"], l.last["old3"] = at(-2*time.Hour), at(-23*time.Hour), at(-25*time.Hour)
	now := t0
	for i := range 500 {
		now = now.Add(17 * time.Minute)
		okQ, untilQ := q.Room(now)
		okL, untilL := l.Send(now, fmt.Sprint("new", i))
		if okQ != okL || !untilQ.Equal(untilL) {
			t.Fatalf("send %d at %v: queue says %v until %v, log %v until %v", i, now, okQ, untilQ, okL, untilL)
		}
		if okQ {
			q.Add(now)
		}
	}
}
