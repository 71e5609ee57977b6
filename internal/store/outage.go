package store

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// SetOutage records (or, with a zero Since, clears) the outage a running
// campaign is waiting out. With pause, the campaign also pauses with the
// reason, if it is still running: the outage lasted too long.
func (s *Store) SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error {
	return s.write(ctx, func(tx *Tx) error {
		var since, probe any
		var text any
		if !o.Since.IsZero() {
			since, probe, text = nanos(o.Since), nanos(o.NextProbe), o.Error
		}
		res, err := tx.ExecContext(ctx, `UPDATE campaigns SET outage_since = ?, outage_error = ?, outage_probe_at = ? WHERE id = ?`,
			since, text, probe, campaignID)
		if err != nil {
			return fmt.Errorf("note outage of campaign %d: %w", campaignID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("campaign %d: %w", campaignID, campaign.ErrNotFound)
		}
		if pause != "" {
			if err := pauseCampaign(ctx, tx, campaignID, pause); err != nil {
				return err
			}
		}
		return nil
	})
}
