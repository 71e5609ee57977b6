package readmodel

import (
	"context"
	"fmt"
)

// MarketingOnboarded is the onboarding status Meta gives a WABA that may
// send through the Marketing Messages API.
const MarketingOnboarded = "ONBOARDED"

// MarketingStatuses are the WABAs' onboarding statuses to the Marketing
// Messages API (marketing_messages_onboarding_status) as template sync or
// account sync last read them, by WABA.
func (r *Reader) MarketingStatuses(ctx context.Context) (map[string]string, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT waba_id, status FROM waba_marketing`)
	if err != nil {
		return nil, fmt.Errorf("read the Marketing Messages API statuses: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var waba, status string
		if err := rows.Scan(&waba, &status); err != nil {
			return nil, fmt.Errorf("read the Marketing Messages API statuses: %w", err)
		}
		out[waba] = status
	}
	return out, rows.Err()
}
