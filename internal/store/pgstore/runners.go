package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// RegisterRunner records a runner (again: a runner taken for dead
// registers anew under its id).
func (s *Store) RegisterRunner(ctx context.Context, r campaign.Runner) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO runners (id, campaign_id, host, pid, pid_space, started_at, heartbeat_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET campaign_id = excluded.campaign_id, host = excluded.host, pid = excluded.pid,
			pid_space = excluded.pid_space, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
		r.ID, r.CampaignID, r.Host, r.PID, r.Space, nanos(r.StartedAt), nanos(r.HeartbeatAt))
	if err != nil {
		return fmt.Errorf("register runner: %w", err)
	}
	return nil
}

// Heartbeat marks a runner alive at now; campaign.ErrNotFound when it is
// not registered (another process took it for dead).
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE runners SET heartbeat_at = $1 WHERE id = $2`, now.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("heartbeat of runner %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("heartbeat of runner %s: %w", id, campaign.ErrNotFound)
	}
	return nil
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM runners WHERE id = $1`, id); err != nil {
		return fmt.Errorf("unregister runner %s: %w", id, err)
	}
	return nil
}
