package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// Outage returns the outage a campaign's runner last recorded; a zero
// Since when there is none.
func (r *Reader) Outage(ctx context.Context, campaignID int64) (campaign.Outage, error) {
	var (
		o            campaign.Outage
		since, probe sql.NullInt64
		text         sql.NullString
	)
	err := r.db.QueryRowContext(ctx, `SELECT outage_since, outage_error, outage_probe_at FROM campaigns WHERE id = ?`, campaignID).
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
