package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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

// Heartbeat marks a runner alive at now and extends the leases of its rows
// in flight that end within campaign.ExtendWithin by campaign.LeaseTerm;
// campaign.ErrNotFound when it is not registered (another process took it
// for dead).
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runners SET heartbeat_at = $1 WHERE id = $2`, now.UnixNano(), id)
		if err != nil {
			return fmt.Errorf("heartbeat of runner %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("heartbeat of runner %s: %w", id, campaign.ErrNotFound)
		}
		if _, err := tx.Exec(ctx, extendLeasesSQL, now.Add(campaign.LeaseTerm).UnixNano(), id,
			now.Add(campaign.ExtendWithin).UnixNano()); err != nil {
			return fmt.Errorf("extend the leases of runner %s: %w", id, err)
		}
		return nil
	})
}

// Start marks the claims' requests started on their attempts, each only
// while its row is still that claim (campaign.FenceOK) and its request not
// yet started; it returns the rows refused (a claim without an attempt is
// one), whose requests must not be made. A rescue racing it meets it on
// the attempts' locks (lockExpiringSQL): whichever commits first, the
// other sees what it wrote.
func (s *Store) Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) ([]int64, error) {
	atts, ids, fences := make([]int64, len(cs)), make([]int64, len(cs)), make([]int64, len(cs))
	for i, c := range cs {
		atts[i], ids[i], fences[i] = c.AttemptID, c.Message.ID, c.Fence
	}
	rows, err := s.pool.Query(ctx, startSQL, atts, ids, fences)
	if err != nil {
		return nil, fmt.Errorf("start %d requests: %w", len(cs), err)
	}
	started, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (v [2]int64, err error) { return v, r.Scan(&v[0], &v[1]) })
	if err != nil {
		return nil, fmt.Errorf("start %d requests: %w", len(cs), err)
	}
	return refusedStarts(cs, started), nil
}

// refusedStarts is the message ids of the claims of cs that a start did
// not mark: started holds the id and fence of each row it marked. A row's
// stale claim is refused though a newer claim of it started beside it.
func refusedStarts(cs []campaign.Claim, started [][2]int64) []int64 {
	ok := make(map[[2]int64]bool, len(started))
	for _, s := range started {
		ok[s] = true
	}
	var refused []int64
	for _, c := range cs {
		if !ok[[2]int64{c.Message.ID, c.Fence}] {
			refused = append(refused, c.Message.ID)
		}
	}
	return refused
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM runners WHERE id = $1`, id); err != nil {
		return fmt.Errorf("unregister runner %s: %w", id, err)
	}
	return nil
}
