// Package quotareset is what a quota reset does, the same on every driver:
// which accounts it moves to which quota day, what it reports of each, and
// where warm-up's promotions at it go. The drivers run the writes of its
// steps in their transactions.
package quotareset

import (
	"fmt"
	"slices"

	"github.com/wasend/wasend/internal/campaign"
)

// Step is one account's part in a reset: its report, and, when it resets,
// the account's id and the quota day it moves to.
type Step struct {
	campaign.QuotaReset
	ID int64
	To string
}

// Plan is the steps of a reset on today of the named accounts of accts
// (all when names is empty); a name none has is campaign.ErrNotFound.
// Quota days only move forward (campaign.NextResetDay).
func Plan(accts []campaign.AccountStatus, names []string, today string, force bool) ([]Step, error) {
	for _, n := range names {
		if !slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.Name == n }) {
			return nil, fmt.Errorf("account %q: %w", n, campaign.ErrNotFound)
		}
	}
	var steps []Step
	for _, a := range accts {
		if len(names) > 0 && !slices.Contains(names, a.Name) {
			continue
		}
		day, reset, behind := campaign.NextResetDay(a.QuotaDay, today, force)
		steps = append(steps, Step{ID: a.ID, To: day, QuotaReset: campaign.QuotaReset{Account: a.Name, Day: today, Before: a.UsedToday,
			LastDay: a.QuotaDay, DailyCap: a.Limits.DailyCap, Behind: behind, Reset: reset}})
	}
	return steps, nil
}

// Promote notes each promotion at the reset on its account's report.
func Promote(rs []campaign.QuotaReset, promoted []campaign.TierChange) {
	for _, p := range promoted {
		for i := range rs {
			if rs[i].Account == p.Account {
				rs[i].Promoted = &p
			}
		}
	}
}
