package store

import (
	"context"
	"fmt"
	"time"
)

// MarketingOnboarded is the onboarding status Meta gives a WABA that may
// send through the Marketing Messages API.
const MarketingOnboarded = "ONBOARDED"

// RecordMarketingStatus keeps a WABA's marketing_messages_onboarding_status
// as template sync just read it.
func (s *Store) RecordMarketingStatus(ctx context.Context, waba, status string, at time.Time) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO waba_marketing (waba_id, status, synced_at) VALUES (?, ?, ?)
			ON CONFLICT (waba_id) DO UPDATE SET status = excluded.status, synced_at = excluded.synced_at`,
			waba, status, at.UnixNano()); err != nil {
			return fmt.Errorf("record the Marketing Messages API status of WABA %s: %w", waba, err)
		}
		return nil
	})
}

// MarketingStatuses are the WABAs' last read onboarding statuses, by WABA.
func (s *Store) MarketingStatuses(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT waba_id, status FROM waba_marketing`)
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
