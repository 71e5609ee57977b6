package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
)

// SetTier changes a tier's limits; tokens its accounts earned at the old
// rate are kept. The tier's row is locked first: two hosts changing it go
// one after the other.
func (s *Store) SetTier(ctx context.Context, name string, l campaign.Limits) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT name FROM tiers WHERE name = $1 FOR UPDATE`, name); err != nil {
			return fmt.Errorf("lock tier %s: %w", name, err)
		}
		accts, err := loadAccounts(ctx, tx, `WHERE a.tier = $2`, name)
		if err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE tiers SET rate = $1, burst = $2, daily_cap = $3 WHERE name = $4`, l.Rate, l.Burst, l.DailyCap, name)
		if err != nil {
			return fmt.Errorf("update tier %s: %w", name, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("tier %q: %w (tiers: new, warm, active)", name, campaign.ErrNotFound)
		}
		now := s.now()
		for _, a := range accts {
			if err := relimit(ctx, tx, a, a.SendLimits(l, a.ThroughputRead), now); err != nil {
				return err
			}
		}
		return nil
	})
}
