package store

import (
	"context"
	"database/sql"
	"errors"
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
			if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET state = 'paused', pause_reason = ?
				WHERE id = ? AND state = 'running'`, pause, campaignID); err != nil {
				return fmt.Errorf("pause campaign %d: %w", campaignID, err)
			}
		}
		return nil
	})
}

// Outage returns the outage a campaign's runner last recorded; a zero
// Since when there is none.
func (s *Store) Outage(ctx context.Context, campaignID int64) (campaign.Outage, error) {
	var (
		o            campaign.Outage
		since, probe sql.NullInt64
		text         sql.NullString
	)
	err := s.db.QueryRowContext(ctx, `SELECT outage_since, outage_error, outage_probe_at FROM campaigns WHERE id = ?`, campaignID).
		Scan(&since, &text, &probe)
	if errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("campaign %d: %w", campaignID, campaign.ErrNotFound)
	}
	if err != nil {
		return o, fmt.Errorf("read outage of campaign %d: %w", campaignID, err)
	}
	if since.Valid {
		o.Since, o.Error = fromNanos(since.Int64), text.String
		if probe.Valid {
			o.NextProbe = fromNanos(probe.Int64)
		}
	}
	return o, nil
}
