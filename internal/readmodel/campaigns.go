package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Campaigns lists every campaign, oldest first.
func (r *Reader) Campaigns(ctx context.Context) ([]campaign.Campaign, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	defer rows.Close()
	var out []campaign.Campaign
	for rows.Next() {
		c, err := rowscan.Campaign(rows)
		if err != nil {
			return nil, fmt.Errorf("list campaigns: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CampaignBySource returns the newest campaign imported from the same file
// bytes, message and read flags (the runner's source key), or
// campaign.ErrNotFound: the shortcut that resumes an unchanged command
// without reading its file again.
func (r *Reader) CampaignBySource(ctx context.Context, key string) (campaign.Campaign, error) {
	c, err := rowscan.Campaign(r.db.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns
		WHERE source_key = ? ORDER BY id DESC LIMIT 1`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return c, campaign.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("read campaign of source %s: %w", key, err)
	}
	return c, nil
}
