package planner

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// TestPlanBucketsAsStored forecasts from buckets the store really hands
// over: settled an instant after the forecast's start (the store reads its
// clock after the reporter did — what `status` panicked on while a
// cap-bound campaign ran beside one with rows waiting to retry), or in
// debt after a high-priority campaign borrowed. A bucket refills from its
// own instant, and a debt is waited out: the closed form must count as
// Pick takes, and both as plain stepping does.
func TestPlanBucketsAsStored(t *testing.T) {
	start := time.Date(2026, 12, 1, 14, 9, 53, 346225878, time.UTC)
	later := start.Add(843812 * time.Nanosecond)
	tier := func(name string, tokens float64, used int, at time.Time) AccountState {
		l := campaign.DefaultTiers[name]
		return AccountState{Name: "sandbox-" + name, Tier: name, Limit: ratelimit.Limit{Rate: l.Rate, Burst: l.Burst},
			Bucket: ratelimit.Bucket{Tokens: tokens, At: at}, Used: used, DailyCap: l.DailyCap}
	}
	tests := []struct {
		name       string
		in         Input
		wantFinish time.Time
		wantSent   []int
	}{{
		name: "status during the sandbox demo",
		// As `status --sandbox` read it: every bucket below one token,
		// settled 0.84 ms after the reporter's now. active has its token
		// 0.2071 s after its bucket's instant, warm 3.2069 s after.
		in: Input{Start: start, Location: time.UTC, Messages: 2, Accounts: []AccountState{
			tier(campaign.TierNew, 0.39942326624999885, 15, later),
			tier(campaign.TierWarm, 0.5991348993750005, 23, later),
			tier(campaign.TierActive, 0.958615838999999, 39, later)}},
		wantFinish: later.Add(3206920805 * time.Nanosecond), wantSent: []int{0, 1, 1},
	}, {
		name: "a bucket settled ahead sends what it holds at once",
		// 2.5 tokens: two now, the third 0.5 token after its instant.
		in: Input{Start: start, Location: time.UTC, Messages: 3, Accounts: []AccountState{
			{Name: "a", Limit: ratelimit.Limit{Rate: 1, Burst: 5}, Bucket: ratelimit.Bucket{Tokens: 2.5, At: start.Add(time.Hour)}, DailyCap: 10}}},
		wantFinish: start.Add(time.Hour + 500*time.Millisecond), wantSent: []int{3},
	}, {
		name: "a debt is waited out",
		// -1.5 tokens at 1/s: the first whole token 2.5 s on.
		in: Input{Start: start, Location: time.UTC, Messages: 2, Accounts: []AccountState{
			{Name: "a", Limit: ratelimit.Limit{Rate: 1, Burst: 5}, Bucket: ratelimit.Bucket{Tokens: -1.5, At: start}, DailyCap: 10},
			{Name: "b", Limit: ratelimit.Limit{Rate: 0.1, Burst: 5}, Bucket: ratelimit.Bucket{Tokens: 0, At: start}, DailyCap: 10}}},
		wantFinish: start.Add(3500 * time.Millisecond), wantSent: []int{2, 0},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, stepOnly := range []bool{false, true} {
				s := newSim(tt.in)
				s.stepOnly = stepOnly
				s.run()
				if s.err != nil {
					t.Fatalf("stepOnly=%v: %v", stepOnly, s.err)
				}
				f := s.forecast()
				if f.Capped || !f.Finish.Equal(tt.wantFinish) {
					t.Errorf("stepOnly=%v: finish %v (capped %v %q), want %v", stepOnly, f.Finish, f.Capped, f.Reason, tt.wantFinish)
				}
				var sent []int
				for _, sh := range f.PerAccount {
					sent = append(sent, sh.Sent)
				}
				if !equalInts(sent, tt.wantSent) {
					t.Errorf("stepOnly=%v: sent %v, want %v", stepOnly, sent, tt.wantSent)
				}
			}
		})
	}
}
