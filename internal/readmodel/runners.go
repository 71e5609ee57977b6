package readmodel

import (
	"context"
	"database/sql"
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

// Holders returns the runners other than self that hold rows of the
// campaign in flight ('sending'), with their last heartbeat; a runner no
// longer registered comes with only its id (a zero heartbeat).
func (r *Reader) Holders(ctx context.Context, campaignID int64, self string) ([]campaign.Runner, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT h.runner_id, r.host, r.pid, coalesce(r.pid_space, ''), r.started_at, r.heartbeat_at
		FROM (SELECT DISTINCT coalesce(runner_id, '') AS runner_id FROM messages
			WHERE `+r.db.d.unindexed("campaign_id")+` = ? AND state = 'sending' AND coalesce(runner_id, '') <> ?) h
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

// RunnerLeases is one registered runner, its last heartbeat and how many
// rows it leases (in flight under its claim), for status.
type RunnerLeases struct {
	campaign.Runner
	Leased int
}

// Runners lists the registered runners by host, each with its leased rows.
func (r *Reader) Runners(ctx context.Context) ([]RunnerLeases, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT r.id, r.campaign_id, r.host, r.pid, r.started_at, r.heartbeat_at,
		(SELECT count(*) FROM messages m WHERE m.runner_id = r.id AND m.state = 'sending')
		FROM runners r ORDER BY `+r.db.d.bytewise("r.host")+`, r.started_at, r.id`)
	if err != nil {
		return nil, fmt.Errorf("list runners: %w", err)
	}
	defer rows.Close()
	var out []RunnerLeases
	for rows.Next() {
		var (
			rl            RunnerLeases
			started, beat int64
		)
		if err := rows.Scan(&rl.ID, &rl.CampaignID, &rl.Host, &rl.PID, &started, &beat, &rl.Leased); err != nil {
			return nil, fmt.Errorf("list runners: %w", err)
		}
		rl.StartedAt, rl.HeartbeatAt = fromNanos(started), fromNanos(beat)
		out = append(out, rl)
	}
	return out, rows.Err()
}
