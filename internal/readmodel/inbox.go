package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// InboxBacklog is how far the webhook applier is behind the receiver: the
// bodies stored and not yet applied, when the oldest of them came, and
// when the latest body of all came (zero: none ever).
type InboxBacklog struct {
	Waiting      int
	OldestWaited time.Time
	LatestAt     time.Time
}

// Lag is how long the oldest waiting body has waited at now, 0 when none
// waits.
func (b InboxBacklog) Lag(now time.Time) time.Duration {
	if b.Waiting == 0 || b.OldestWaited.IsZero() {
		return 0
	}
	return max(now.Sub(b.OldestWaited), 0)
}

// WebhookBacklog reads the InboxBacklog: the waiting bodies through the
// partial index of unapplied ones, the latest by its row id, so a dashboard
// can read it every second on an inbox of millions.
func (r *Reader) WebhookBacklog(ctx context.Context) (InboxBacklog, error) {
	var (
		out            InboxBacklog
		oldest, latest sql.NullInt64
	)
	err := r.db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM webhook_inbox WHERE applied_at IS NULL),
		(SELECT received_at FROM webhook_inbox WHERE applied_at IS NULL ORDER BY id LIMIT 1),
		(SELECT received_at FROM webhook_inbox ORDER BY id DESC LIMIT 1)`).Scan(&out.Waiting, &oldest, &latest)
	if err != nil {
		return out, fmt.Errorf("read webhook inbox backlog: %w", err)
	}
	out.OldestWaited, out.LatestAt = fromNanos(oldest.Int64), fromNanos(latest.Int64)
	return out, nil
}
