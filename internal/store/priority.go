package store

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// SetShare changes how a campaign shares the accounts (`campaign set`),
// taking effect at the next claim of every process sending it.
func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error {
	return s.write(ctx, func(tx *Tx) error {
		if err := refuseCancelled(ctx, tx, id); err != nil {
			return err
		}
		c, err := rowscan.Campaign(tx.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = ?`, id))
		if err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		sh := ch.Apply(c.Share)
		if err := sh.Validate(); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET priority = ?, weight = ?, borrow = ? WHERE id = ?`,
			int(sh.Priority), sh.Weight, int64(sh.Borrow), id); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		return nil
	})
}
