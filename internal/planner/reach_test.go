package planner

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// TestPlanCountsMessagingLimits: a portfolio lets its distinct recipients
// into each 24 h window up to its limit minus the margin, shared by its
// accounts; an account outside it is not held back.
func TestPlanCountsMessagingLimits(t *testing.T) {
	fast := func(name string) AccountState { return account(name, 10, 10, 1_000_000, t0) }
	three := []AccountState{fast("a"), fast("b"), fast("c")}
	day := 24 * time.Hour
	tests := []struct {
		name     string
		in       Input
		min, max time.Duration // the finish, after the start
	}{{
		// 2,000 a window, all five windows: the last batch goes at the
		// start of the fifth day.
		name: "10,000 on a 2K portfolio without margin: five days",
		in: Input{Messages: 10_000, Accounts: three, Portfolios: []PortfolioState{
			{Name: "acme", Reach: ratelimit.Reach{Limit: 2000}, Accounts: []string{"a", "b", "c"}}}},
		min: 4 * day, max: 4*day + time.Hour,
	}, {
		name: "with the 5 % margin: 1,900 a window, six",
		in: Input{Messages: 10_000, Accounts: three, Portfolios: []PortfolioState{
			{Name: "acme", Reach: ratelimit.Reach{Limit: 2000, Margin: 0.05}, Accounts: []string{"a", "b", "c"}}}},
		min: 5 * day, max: 5*day + time.Hour,
	}, {
		name: "recipients already in the window take their room until they leave",
		in: Input{Messages: 100, Accounts: three[:1], Portfolios: []PortfolioState{
			{Name: "acme", Reach: ratelimit.Reach{Limit: 250}, Accounts: []string{"a"},
				Latest: repeatTime(t0.Add(-20*time.Hour), 200)}}},
		// 50 go at once, the other 50 when the 200 leave at +4h.
		min: 4 * time.Hour, max: 4*time.Hour + 10*time.Second,
	}, {
		name: "an account outside the portfolio is not held back",
		in: Input{Messages: 10_000, Accounts: three, Portfolios: []PortfolioState{
			{Name: "acme", Reach: ratelimit.Reach{Limit: 250}, Accounts: []string{"a", "b"}}}},
		min: 0, max: time.Hour,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Start, tt.in.Location = t0, time.UTC
			f := mustPlan(t, tt.in)
			if f.Capped {
				t.Fatalf("capped: %s", f.Reason)
			}
			if f.Duration < tt.min || f.Duration > tt.max {
				t.Errorf("finishes after %v, want between %v and %v", f.Duration, tt.min, tt.max)
			}
		})
	}
}

func repeatTime(t time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t
	}
	return out
}

func TestPlanPortfolioAllowingNothing(t *testing.T) {
	f := mustPlan(t, Input{Start: t0, Location: time.UTC, Messages: 5, Accounts: []AccountState{account("a", 1, 1, 100, t0)},
		Portfolios: []PortfolioState{{Name: "p", Reach: ratelimit.Reach{Limit: 1, Margin: 0.5}, Accounts: []string{"a"}}}})
	if !f.Capped {
		t.Fatalf("forecast %+v, want never", f)
	}
}
