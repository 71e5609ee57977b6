package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

//go:embed reach_counts.sql
var reachTriggersSQL string

// reachTriggerNames are the triggers reach_counts.sql creates.
var reachTriggerNames = []string{"reach_counts_log", "reach_counts_relog", "reach_counts_unlog",
	"reach_counts_members", "reach_counts_account_gone"}

// ensureReachCounts creates the triggers that keep the running reach
// counts when any is missing (after migration 0040, or one that rebuilt
// the send log or accounts), forgetting the counts kept without them: each
// is built again from the log at its next read.
func ensureReachCounts(ctx context.Context, s *Store) error {
	return ensureTriggers(ctx, s, reachTriggerNames, "keep the portfolios' reach", "DELETE FROM reach_counts;\n"+reachTriggersSQL)
}

// inMembers is the IN list of members and their arguments.
func inMembers(members []int64) (string, []any) {
	args := make([]any, 0, len(members)+2)
	for _, id := range members {
		args = append(args, id)
	}
	return "(" + repeated(len(members), "?") + ")", args
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// reachCount is how many distinct recipients the scope's accounts messaged
// after since, from its running count (reach_counts, migration 0040): the
// count at its `through` less the recipients whose latest send lies
// between, so a read costs the sends that left the window since the last
// one, not the window. With w (the claim's transaction) the count moved to
// since is stored; a read-only caller passes nil. A missing count, or one
// more than a window away, is counted from the log.
func reachCount(ctx context.Context, q querier, w execer, s driver.ReachScope, since time.Time) (int, error) {
	if len(s.Members) == 0 {
		return 0, nil
	}
	var (
		used, through int64
		at            = nanos(since)
	)
	err := q.QueryRowContext(ctx, `SELECT used, through FROM reach_counts WHERE portfolio_id = ? AND account_id = ?`,
		s.Portfolio, s.Account).Scan(&used, &through)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && max(at-through, through-at) >= int64(ratelimit.ReachWindow)):
		n, err := countWindow(ctx, q, s.Members, at)
		if err != nil || w == nil || at < through {
			return n, err
		}
		if _, err := w.ExecContext(ctx, `INSERT INTO reach_counts (portfolio_id, account_id, used, through) VALUES (?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET used = excluded.used, through = excluded.through`, s.Portfolio, s.Account, n, at); err != nil {
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
		k, err := leftBetween(ctx, q, s.Members, at, through)
		return int(used) + k, err
	}
	k, err := leftBetween(ctx, q, s.Members, through, at)
	if err != nil || w == nil {
		return int(used) - k, err
	}
	if _, err := w.ExecContext(ctx, `UPDATE reach_counts SET used = used - ?, through = ? WHERE portfolio_id = ? AND account_id = ?`,
		k, at, s.Portfolio, s.Account); err != nil {
		return 0, fmt.Errorf("store the portfolio's reach: %w", err)
	}
	return int(used) - k, nil
}

// readerMoveAfter is how far behind since a reader finds a running count
// before it stores the count moved on: a portfolio whose claims stopped
// would otherwise have every status read again all the sends that left
// the window since the last claim (up to a day of them).
const readerMoveAfter = time.Minute

// reachStale reports whether the scope's running count is missing, a
// window or more from since (a read would count the window from the log),
// or more than readerMoveAfter behind it.
func reachStale(ctx context.Context, q querier, s driver.ReachScope, since time.Time) (bool, error) {
	var through int64
	err := q.QueryRowContext(ctx, `SELECT through FROM reach_counts WHERE portfolio_id = ? AND account_id = ?`,
		s.Portfolio, s.Account).Scan(&through)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return len(s.Members) > 0, nil
	case err != nil:
		return false, fmt.Errorf("read the portfolio's reach: %w", err)
	}
	at := nanos(since)
	return max(at-through, through-at) >= int64(ratelimit.ReachWindow) || at-through > int64(readerMoveAfter), nil
}

// readReach is the scope's reach as a reader sees it: from the running
// count, built (or moved on a window or more) and stored first when it is
// missing or that far behind (after an upgrade, or a day without claims),
// so the count from the log is paid once, not at every status. A database
// that cannot be written is counted from the log.
func (s *Store) readReach(ctx context.Context, scope driver.ReachScope, since time.Time) (int, error) {
	stale, err := reachStale(ctx, s.db, scope, since)
	if err != nil {
		return 0, err
	}
	if !stale {
		return reachCount(ctx, s.db, nil, scope, since)
	}
	var n int
	if err := s.write(ctx, func(tx *Tx) error {
		var err error
		n, err = reachCount(ctx, tx, tx, scope, since)
		return err
	}); err != nil {
		return reachCount(ctx, s.db, nil, scope, since)
	}
	return n, nil
}

// countWindow counts the distinct recipients the accounts messaged after
// since (ns) from the send log: the whole window, once per count built.
func countWindow(ctx context.Context, q querier, members []int64, since int64) (int, error) {
	in, args := inMembers(members)
	// One number logs each recipient once: no need to tell them apart.
	what := "count(DISTINCT phone)"
	if len(members) == 1 {
		what = "count(*)"
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT `+what+` FROM contact_log WHERE account_id IN `+in+` AND last_at > ?`,
		append(args, since)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the portfolio's recipients: %w", err)
	}
	return n, nil
}

// leftBetween counts the recipients whose latest send from any of the
// accounts lies in (from, to] (ns): each is counted at the account that
// sent it last (the lowest id of a tie), read by that account's window
// index.
func leftBetween(ctx context.Context, q querier, members []int64, from, to int64) (int, error) {
	in, others := inMembers(members)
	total := 0
	for _, id := range members {
		query := `SELECT count(*) FROM contact_log c WHERE c.account_id = ? AND c.last_at > ? AND c.last_at <= ?`
		args := []any{id, from, to}
		if len(members) > 1 {
			query += ` AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id IN ` + in + `
				AND o.account_id <> c.account_id AND (o.last_at > c.last_at OR (o.last_at = c.last_at AND o.account_id < c.account_id)))`
			args = append(args, others...)
		}
		var n int
		if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count the recipients who left the portfolio's window: %w", err)
		}
		total += n
	}
	return total, nil
}

// reachOldest is the oldest of the latest sends to the recipients the
// accounts messaged after since: when it leaves, there is room again. Each
// account's window index gives its oldest send that is the recipient's
// latest, in a step or a few.
func reachOldest(ctx context.Context, q querier, members []int64, since time.Time) (time.Time, error) {
	in, others := inMembers(members)
	var oldest int64
	for _, id := range members {
		query := `SELECT c.last_at FROM contact_log c WHERE c.account_id = ? AND c.last_at > ?`
		args := []any{id, nanos(since)}
		if len(members) > 1 {
			query += ` AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id IN ` + in + `
				AND o.last_at > c.last_at)`
			args = append(args, others...)
		}
		var at int64
		err := q.QueryRowContext(ctx, query+` ORDER BY c.last_at LIMIT 1`, args...).Scan(&at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return time.Time{}, fmt.Errorf("find the portfolio's oldest recipient: %w", err)
		}
		if oldest == 0 || at < oldest {
			oldest = at
		}
	}
	if oldest == 0 {
		return time.Time{}, nil
	}
	return fromNanos(oldest), nil
}
