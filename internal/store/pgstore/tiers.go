package pgstore

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// Tiers lists the tiers in campaign.TierNames' order.
func (s *Store) Tiers(ctx context.Context) ([]campaign.Tier, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, rate, burst, daily_cap FROM tiers`)
	if err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	defer rows.Close()
	byName := map[string]campaign.Tier{}
	for rows.Next() {
		var t campaign.Tier
		if err := rows.Scan(&t.Name, &t.Limits.Rate, &t.Limits.Burst, &t.Limits.DailyCap); err != nil {
			return nil, fmt.Errorf("list tiers: %w", err)
		}
		t.Defaults = campaign.DefaultTiers[t.Name]
		byName[t.Name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	out := make([]campaign.Tier, 0, len(byName))
	for _, name := range campaign.TierNames {
		if t, ok := byName[name]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// SetTier changes a tier's limits. Accounts on the tier must have their
// buckets relimited in the same transaction (SQLite's relimit): until the
// accounts are ported, a tier with accounts is refused as unsupported.
func (s *Store) SetTier(ctx context.Context, name string, l campaign.Limits) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("update tier %s: %w", name, err)
	}
	defer tx.Rollback(ctx)
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE tier = $1 AND removed_at IS NULL`, name).Scan(&n); err != nil {
		return fmt.Errorf("update tier %s: %w", name, err)
	}
	if n > 0 {
		return s.unsupported("SetTier (a tier with accounts)")
	}
	tag, err := tx.Exec(ctx, `UPDATE tiers SET rate = $1, burst = $2, daily_cap = $3 WHERE name = $4`, l.Rate, l.Burst, l.DailyCap, name)
	if err != nil {
		return fmt.Errorf("update tier %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("tier %q: %w (tiers: new, warm, active)", name, campaign.ErrNotFound)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("update tier %s: %w", name, err)
	}
	return nil
}
