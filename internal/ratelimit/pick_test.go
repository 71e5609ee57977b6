package ratelimit

import (
	"testing"
	"time"
)

func TestPick(t *testing.T) {
	perSec := func(burst int) Limit { return Limit{Rate: 1, Burst: burst} }
	// cand is an account holding tokens at t0 with quota left.
	cand := func(l Limit, tokens float64) Candidate {
		return Candidate{Limit: l, Bucket: Bucket{Tokens: tokens, At: t0}, DailyCap: 100}
	}
	capped := func(c Candidate) Candidate { c.Used = c.DailyCap; return c }
	notBefore := func(c Candidate, d time.Duration) Candidate { c.NotBefore = at(d); return c }
	globalEvery2s := Every(2*time.Second, 1)

	tests := []struct {
		name        string
		at          time.Duration
		cands       []Candidate
		global      *Bucket
		globalLimit Limit
		want        Decision
		wantUntil   time.Duration // offset of want.Until from t0, when set
	}{
		{
			name:  "no candidates",
			cands: nil,
			want:  Decision{Index: -1, Reason: ReasonEmpty},
		},
		{
			name:  "fullest relative to its burst, not in absolute tokens",
			cands: []Candidate{cand(perSec(10), 5), cand(perSec(2), 2), cand(perSec(4), 3)},
			want:  Decision{Index: 1},
		},
		{
			name:  "a tie goes to the first",
			cands: []Candidate{cand(perSec(4), 2), cand(perSec(2), 1)},
			want:  Decision{Index: 0},
		},
		{
			name:  "fill is judged at t, after refill",
			at:    3 * time.Second,
			cands: []Candidate{cand(perSec(10), 6), cand(Limit{Rate: 0.1, Burst: 10}, 8)},
			want:  Decision{Index: 0}, // 9/10 against 8.3/10
		},
		{
			name:  "a capped account is skipped even when fullest",
			cands: []Candidate{capped(cand(perSec(5), 5)), cand(perSec(5), 1)},
			want:  Decision{Index: 1},
		},
		{
			name:  "all capped: only a reset helps",
			cands: []Candidate{capped(cand(perSec(5), 5)), capped(cand(perSec(5), 0))},
			want:  Decision{Index: -1, Reason: ReasonCapped},
		},
		{
			name:  "a daily cap of 0 sends nothing",
			cands: []Candidate{{Limit: perSec(5), Bucket: Full(perSec(5), t0), DailyCap: 0}},
			want:  Decision{Index: -1, Reason: ReasonCapped},
		},
		{
			name:  "used beyond a lowered cap counts as capped",
			cands: []Candidate{{Limit: perSec(5), Bucket: Full(perSec(5), t0), Used: 12, DailyCap: 10}},
			want:  Decision{Index: -1, Reason: ReasonCapped},
		},
		{
			name:      "no tokens: the earliest ready time",
			cands:     []Candidate{cand(Every(12*time.Second, 5), 0), cand(Every(4*time.Second, 5), 0.25), cand(perSec(1), 0.5)},
			want:      Decision{Index: -1, Reason: ReasonTokens},
			wantUntil: 500 * time.Millisecond,
		},
		{
			name:      "capped accounts do not set the ready time",
			cands:     []Candidate{capped(cand(perSec(1), 0.9)), cand(Every(12*time.Second, 5), 0)},
			want:      Decision{Index: -1, Reason: ReasonTokens},
			wantUntil: 12 * time.Second,
		},
		{
			name:  "NotBefore holds a full account back",
			cands: []Candidate{notBefore(cand(perSec(5), 5), 30*time.Second), cand(perSec(5), 1)},
			want:  Decision{Index: 1},
		},
		{
			name:  "NotBefore in the past is ignored",
			at:    time.Minute,
			cands: []Candidate{notBefore(cand(perSec(5), 0), 30*time.Second)},
			want:  Decision{Index: 0},
		},
		{
			name:  "NotBefore equal to t allows",
			at:    30 * time.Second,
			cands: []Candidate{notBefore(cand(perSec(5), 0), 30*time.Second)},
			want:  Decision{Index: 0},
		},
		{
			name:      "NotBefore later than the token sets Until",
			cands:     []Candidate{notBefore(cand(perSec(5), 0), 30*time.Second), cand(Every(12*time.Second, 5), 0)},
			want:      Decision{Index: -1, Reason: ReasonTokens},
			wantUntil: 12 * time.Second,
		},
		{
			name:      "token later than NotBefore sets Until",
			cands:     []Candidate{notBefore(cand(Every(12*time.Second, 5), 0), 3*time.Second)},
			want:      Decision{Index: -1, Reason: ReasonTokens},
			wantUntil: 12 * time.Second,
		},
		{
			name:  "a burst below one can never send",
			cands: []Candidate{cand(Limit{Rate: 1, Burst: 0}, 0)},
			want:  Decision{Index: -1, Reason: ReasonCapped},
		},
		{
			name:        "global bucket with a token allows",
			cands:       []Candidate{cand(perSec(5), 5)},
			global:      &Bucket{Tokens: 1, At: t0},
			globalLimit: globalEvery2s,
			want:        Decision{Index: 0},
		},
		{
			name:        "global bucket empty: its ready time",
			at:          500 * time.Millisecond,
			cands:       []Candidate{cand(perSec(5), 5)},
			global:      &Bucket{Tokens: 0, At: t0},
			globalLimit: globalEvery2s,
			want:        Decision{Index: -1, Reason: ReasonGlobal},
			wantUntil:   2 * time.Second,
		},
		{
			name:        "accounts waiting take precedence over an empty global bucket",
			cands:       []Candidate{cand(Every(12*time.Second, 5), 0)},
			global:      &Bucket{Tokens: 0, At: t0},
			globalLimit: globalEvery2s,
			want:        Decision{Index: -1, Reason: ReasonTokens},
			wantUntil:   12 * time.Second,
		},
		{
			name:        "global bucket with a burst of zero never allows",
			cands:       []Candidate{cand(perSec(5), 5)},
			global:      &Bucket{Tokens: 0, At: t0},
			globalLimit: Limit{Rate: 1, Burst: 0},
			want:        Decision{Index: -1, Reason: ReasonGlobal},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if tt.wantUntil != 0 {
				want.Until = at(tt.wantUntil)
			}
			got := Pick(at(tt.at), tt.cands, tt.global, tt.globalLimit)
			if got.Index != want.Index || got.Reason != want.Reason || !got.Until.Equal(want.Until) {
				t.Errorf("Pick = {%d %q %v}, want {%d %q %v}", got.Index, got.Reason, fmtAt(got.Until), want.Index, want.Reason, fmtAt(want.Until))
			}
		})
	}
}

// fmtAt prints an instant as an offset from t0, or "zero".
func fmtAt(t time.Time) string {
	if t.IsZero() {
		return "zero"
	}
	return "+" + t.Sub(t0).String()
}

// TestPickDrainsFullestFirst takes one token per Pick at a single instant:
// the fill-first rule spreads sends so that every bucket drains evenly.
func TestPickDrainsFullestFirst(t *testing.T) {
	cands := []Candidate{
		{Limit: Limit{Rate: 1, Burst: 4}, Bucket: Bucket{Tokens: 4, At: t0}, DailyCap: 100},
		{Limit: Limit{Rate: 1, Burst: 2}, Bucket: Bucket{Tokens: 2, At: t0}, DailyCap: 100},
		{Limit: Limit{Rate: 1, Burst: 2}, Bucket: Bucket{Tokens: 2, At: t0}, DailyCap: 2},
	}
	var order []int
	for {
		d := Pick(t0, cands, nil, Limit{})
		if d.Index < 0 {
			if d.Reason != ReasonTokens || !d.Until.Equal(at(time.Second)) {
				t.Fatalf("final decision %+v, want tokens until +1s", d)
			}
			break
		}
		c := &cands[d.Index]
		b, ok := c.Bucket.TakeAt(c.Limit, t0, 1)
		if !ok {
			t.Fatalf("Pick chose %d without a token", d.Index)
		}
		c.Bucket, c.Used = b, c.Used+1
		order = append(order, d.Index)
	}
	want := []int{0, 1, 2, 0, 0, 1, 2, 0}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}
