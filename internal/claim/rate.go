package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
)

// AllowedRate is how many messages per second the campaign's usable
// accounts may send at now (dispatch.RateReporter). The engine sizes its
// requests in flight by it; claims never rely on it.
func (l *Ledger) AllowedRate(ctx context.Context, campaignID int64, now time.Time) (float64, error) {
	accts, err := l.Accounts(ctx)
	if err != nil {
		return 0, err
	}
	dropped, err := readmodel.New(l.Driver).DroppedAccounts(ctx, campaignID)
	if err != nil {
		return 0, err
	}
	out := make(map[string]bool, len(dropped))
	for _, d := range dropped {
		out[d.Account] = true
	}
	global, _, on, err := readmodel.New(l.Driver).GlobalLimit(ctx)
	if err != nil {
		return 0, err
	}
	return allowedRate(accts, out, global, on, now), nil
}

// allowedRate is the sum of the accounts' effective rates (after
// throttling), leaving out those disabled, dropped from the campaign,
// resting or at their daily cap, within the global limit when it is on.
func allowedRate(accts []campaign.AccountStatus, dropped map[string]bool, global ratelimit.Limit, globalOn bool, now time.Time) float64 {
	var rate float64
	for _, a := range accts {
		if a.Disabled || dropped[a.Name] || a.UsedToday >= a.Limits.DailyCap || now.Before(a.CooldownUntil) {
			continue
		}
		rate += a.Limits.Rate * a.RateFactor
	}
	if globalOn {
		rate = min(rate, global.Rate)
	}
	return rate
}
