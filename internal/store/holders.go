package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// Holders returns the runners other than self that hold rows of the
// campaign in flight ('sending'), with their last heartbeat; a runner no
// longer registered comes with only its id (a zero heartbeat).
func (s *Store) Holders(ctx context.Context, campaignID int64, self string) ([]campaign.Runner, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT h.runner_id, r.host, r.pid, coalesce(r.pid_space, ''), r.started_at, r.heartbeat_at
		FROM (SELECT DISTINCT coalesce(runner_id, '') AS runner_id FROM messages
			WHERE campaign_id = ? AND state = 'sending' AND coalesce(runner_id, '') <> ?) h
		LEFT JOIN runners r ON r.id = h.runner_id`, campaignID, self)
	if err != nil {
		return nil, fmt.Errorf("campaign %d: find the runners of its rows in flight: %w", campaignID, err)
	}
	defer rows.Close()
	var out []campaign.Runner
	for rows.Next() {
		var (
			r             campaign.Runner
			host          sql.NullString
			pid           sql.NullInt64
			started, beat sql.NullInt64
		)
		if err := rows.Scan(&r.ID, &host, &pid, &r.Space, &started, &beat); err != nil {
			return nil, fmt.Errorf("campaign %d: find the runners of its rows in flight: %w", campaignID, err)
		}
		r.CampaignID, r.Host, r.PID = campaignID, host.String, int(pid.Int64)
		r.StartedAt, r.HeartbeatAt = fromNullNanos(started), fromNullNanos(beat)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("campaign %d: find the runners of its rows in flight: %w", campaignID, err)
	}
	return out, nil
}
