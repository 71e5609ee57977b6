package tierrecord

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Tx is what warm-up's moves need of a driver's transaction: the record
// to judge and the move to make. The judging is campaign's (AssessTier,
// Demotion); the order of reading, judging and moving is written once here
// for both drivers.
type Tx interface {
	// AutoTierAccounts reads the live auto-tier accounts by id; id > 0
	// reads that one only.
	AutoTierAccounts(ctx context.Context, id int64) ([]Account, error)
	// TierDays is an account's requests since its tier began, by quota
	// day in loc.
	TierDays(ctx context.Context, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error)
	// LastHour counts an account's requests claimed since and those of
	// them answered 130429 (LastHourSQL).
	LastHour(ctx context.Context, id int64, since time.Time) (requests, throttled int, err error)
	// ChangeTier moves an account to another tier, resets its time in tier
	// and logs why (ChangeTierSQL, LogTierSQL).
	ChangeTier(ctx context.Context, id int64, from, to string, now time.Time, why string) error
}

// The statements behind Tx both drivers run, placeholders numbered
// (dialect.Bind): the tier's limits apply from the next claim; tokens
// earned so far are kept (the bucket's cap trims them to a lower burst).
const (
	LastHourSQL = `SELECT count(*), count(CASE WHEN error_code = 130429 THEN 1 END) FROM attempts
		WHERE account_id = ?1 AND claimed_at >= ?2`
	ChangeTierSQL = `UPDATE accounts SET tier = ?1, tier_since = ?2 WHERE id = ?3`
	LogTierSQL    = `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES (?1, ?2, ?3, ?4, ?5)`
)

// PromoteDue promotes every auto-tier account whose record earns it,
// logging why; run with each quota reset.
func PromoteDue(ctx context.Context, tx Tx, now time.Time, loc *time.Location) ([]campaign.TierChange, error) {
	accts, err := tx.AutoTierAccounts(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []campaign.TierChange
	for _, a := range accts {
		days, err := tx.TierDays(ctx, a.ID, a.Since, loc)
		if err != nil {
			return nil, err
		}
		p := campaign.AssessTier(a.Tier, a.Since, now, a.PromoteAfter, a.DailyCap, days, a.Quality)
		if !p.Ready {
			continue
		}
		why := p.Promotion(a.DailyCap)
		if err := tx.ChangeTier(ctx, a.ID, a.Tier, p.Next, now, why); err != nil {
			return nil, err
		}
		out = append(out, campaign.TierChange{Account: a.Name, At: now, From: a.Tier, To: p.Next, Reason: why})
	}
	return out, nil
}

// Demote demotes an auto-tier account as campaign.Demotion judges
// outcome o.
func Demote(ctx context.Context, tx Tx, id int64, o campaign.Outcome, now time.Time) error {
	if !campaign.MayDemote(o) {
		return nil
	}
	accts, err := tx.AutoTierAccounts(ctx, id)
	if err != nil || len(accts) == 0 {
		return err
	}
	a := accts[0]
	to, why, err := campaign.Demotion(a.Tier, a.Since, now, o, func() (int, int, error) {
		return tx.LastHour(ctx, id, now.Add(-time.Hour))
	})
	if err != nil || to == "" {
		return err
	}
	return tx.ChangeTier(ctx, id, a.Tier, to, now, why)
}
