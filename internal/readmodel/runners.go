package readmodel

import (
	"context"
	"fmt"
	"time"
)

// LiveRunners counts, per campaign, the registered runners whose last
// heartbeat is at or after since: the processes sending it now. A runner
// that stopped cleanly is unregistered; one that crashed stops beating.
func (r *Reader) LiveRunners(ctx context.Context, since time.Time) (map[int64]int, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT campaign_id, count(*) FROM runners
		WHERE heartbeat_at >= ? GROUP BY campaign_id`, nanos(since))
	if err != nil {
		return nil, fmt.Errorf("list live runners: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}
