package store

import (
	"context"
	"fmt"
	"time"
)

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for the claims of a campaign.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	if gap < 0 {
		return fmt.Errorf("pair gap %v: must not be negative", gap)
	}
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET pair_gap = ? WHERE id = ?`, int64(gap), campaignID); err != nil {
			return fmt.Errorf("set the pair gap of campaign %d: %w", campaignID, err)
		}
		return nil
	})
}
