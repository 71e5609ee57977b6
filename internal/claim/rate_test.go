package claim

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// TestAllowedRate: the pool is sized by the accounts that may send now, at
// their throttled rates, within the global limit.
func TestAllowedRate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	acct := func(name string, rate, factor float64, used, cap int) campaign.AccountStatus {
		a := campaign.AccountStatus{RateFactor: factor, UsedToday: used}
		a.Name, a.Limits = name, campaign.Limits{Rate: rate, Burst: 1, DailyCap: cap}
		return a
	}
	resting := acct("resting", 8, 1, 0, 100)
	resting.CooldownUntil = now.Add(time.Second)
	rested := acct("rested", 16, 1, 0, 100)
	rested.CooldownUntil = now
	disabled := acct("disabled", 32, 1, 0, 100)
	disabled.Disabled = true
	accts := []campaign.AccountStatus{acct("a", 2, 1, 0, 100), acct("half", 4, 0.5, 0, 100),
		acct("capped", 64, 1, 100, 100), resting, rested, disabled, acct("dropped", 128, 1, 0, 100)}
	dropped := map[string]bool{"dropped": true}
	tests := []struct {
		name   string
		global ratelimit.Limit
		on     bool
		want   float64
	}{
		{"usable accounts only", ratelimit.Limit{Rate: 1}, false, 2 + 2 + 16},
		{"within the global limit", ratelimit.Limit{Rate: 5}, true, 5},
		{"a global limit above the sum", ratelimit.Limit{Rate: 50}, true, 20},
	}
	for _, tt := range tests {
		if got := allowedRate(accts, dropped, tt.global, tt.on, now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
