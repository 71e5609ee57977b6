package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// TierHistory lists an account's tier changes, oldest first.
func (r *Reader) TierHistory(ctx context.Context, name string) ([]campaign.TierChange, error) {
	var id int64
	err := r.db.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ? AND removed_at IS NULL`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read account %s: %w", name, err)
	}
	rows, err := r.db.QueryContext(ctx, `SELECT at, from_tier, to_tier, reason FROM tier_changes WHERE account_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read tier history of %s: %w", name, err)
	}
	defer rows.Close()
	var out []campaign.TierChange
	for rows.Next() {
		c := campaign.TierChange{Account: name}
		var at int64
		if err := rows.Scan(&at, &c.From, &c.To, &c.Reason); err != nil {
			return nil, err
		}
		c.At = fromNanos(at)
		out = append(out, c)
	}
	return out, rows.Err()
}
