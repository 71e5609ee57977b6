package readmodel

import (
	"context"
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
