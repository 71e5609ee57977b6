package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// LiveRunners counts, per campaign, the registered runners that live
// (campaign.Liveness) says are alive at now: the processes sending it. A
// runner that stopped cleanly is unregistered; one that died stops beating,
// and on the reader's own machine its pid is gone at once.
func (r *Reader) LiveRunners(ctx context.Context, live campaign.Liveness, now time.Time) (map[int64]int, error) {
	// Silent longer than Stale is dead whatever the pid says: those rows
	// are not even read.
	rows, err := r.db.QueryContext(ctx, `SELECT id, campaign_id, host, pid, pid_space, heartbeat_at FROM runners
		WHERE heartbeat_at >= ?`, nanos(now.Add(-live.Stale)))
	if err != nil {
		return nil, fmt.Errorf("list live runners: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var (
			rn   campaign.Runner
			beat int64
		)
		if err := rows.Scan(&rn.ID, &rn.CampaignID, &rn.Host, &rn.PID, &rn.Space, &beat); err != nil {
			return nil, fmt.Errorf("list live runners: %w", err)
		}
		rn.HeartbeatAt = fromNanos(beat)
		if !live.Dead(rn, now) {
			out[rn.CampaignID]++
		}
	}
	return out, rows.Err()
}
