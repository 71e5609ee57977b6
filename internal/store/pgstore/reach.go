package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// The portfolio's reach as the claim reads it: SQLite's running count
// (reach_counts.go) in Postgres's words, kept by the triggers of
// migration 0005.

// reachCount is how many distinct recipients the scope's accounts messaged
// after since, from its running count, moved to since and stored.
func reachCount(ctx context.Context, tx querier, s driver.ReachScope, since time.Time) (int, error) {
	if len(s.Members) == 0 {
		return 0, nil
	}
	var (
		used, through int64
		at            = nanos(since)
	)
	err := tx.QueryRow(ctx, `SELECT used, through FROM reach_counts WHERE portfolio_id = $1 AND account_id = $2`,
		s.Portfolio, s.Account).Scan(&used, &through)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || (err == nil && max(at-through, through-at) >= int64(ratelimit.ReachWindow)):
		n, err := countWindow(ctx, tx, s.Members, at)
		if err != nil || at < through {
			return n, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO reach_counts (portfolio_id, account_id, used, through) VALUES ($1, $2, $3, $4)
			ON CONFLICT (portfolio_id, account_id) DO UPDATE SET used = excluded.used, through = excluded.through`,
			s.Portfolio, s.Account, n, at); err != nil {
			return 0, fmt.Errorf("store the portfolio's reach: %w", err)
		}
		return n, nil
	case err != nil:
		return 0, fmt.Errorf("read the portfolio's reach: %w", err)
	case at == through:
		return int(used), nil
	case at < through:
		// A claim whose instant was taken before another's committed:
		// the recipients who left the window in between are still in.
		k, err := leftBetween(ctx, tx, s.Members, at, through)
		return int(used) + k, err
	}
	k, err := leftBetween(ctx, tx, s.Members, through, at)
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE reach_counts SET used = used - $1, through = $2 WHERE portfolio_id = $3 AND account_id = $4`,
		k, at, s.Portfolio, s.Account); err != nil {
		return 0, fmt.Errorf("store the portfolio's reach: %w", err)
	}
	return int(used) - k, nil
}

// countWindow counts the distinct recipients the accounts messaged after
// since (ns) from the send log.
func countWindow(ctx context.Context, q querier, members []int64, since int64) (int, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(DISTINCT phone) FROM contact_log WHERE account_id = ANY($1) AND last_at > $2`,
		members, since).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the portfolio's recipients: %w", err)
	}
	return int(n), nil
}

// leftBetween counts the recipients whose latest send from any of the
// accounts lies in (from, to] (ns), each at the account that sent it last
// (the lowest id of a tie).
func leftBetween(ctx context.Context, q querier, members []int64, from, to int64) (int, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM contact_log c
		WHERE c.account_id = ANY($1) AND c.last_at > $2 AND c.last_at <= $3
		AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id = ANY($1)
			AND o.account_id <> c.account_id AND (o.last_at > c.last_at OR (o.last_at = c.last_at AND o.account_id < c.account_id)))`,
		members, from, to).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the recipients who left the portfolio's window: %w", err)
	}
	return int(n), nil
}

// reachOldest is the oldest of the latest sends to the recipients the
// accounts messaged after since: when it leaves, there is room again.
func reachOldest(ctx context.Context, q querier, members []int64, since time.Time) (time.Time, error) {
	var oldest *int64
	if err := q.QueryRow(ctx, `SELECT min(c.last_at) FROM contact_log c WHERE c.account_id = ANY($1) AND c.last_at > $2
		AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id = ANY($1) AND o.last_at > c.last_at)`,
		members, nanos(since)).Scan(&oldest); err != nil {
		return time.Time{}, fmt.Errorf("find the portfolio's oldest recipient: %w", err)
	}
	return fromNullNanos(oldest), nil
}
