package store

import (
	"context"
	_ "embed"
	"time"

	"github.com/wasend/wasend/internal/store/claimsql"
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

// readReach is the scope's reach as a reader sees it: from the running
// count, built (or moved on a window or more) and stored first when it is
// missing or that far behind (after an upgrade, or a day without claims),
// so the count from the log is paid once, not at every status. A database
// that cannot be written is counted from the log.
func (s *Store) readReach(ctx context.Context, scope driver.ReachScope, since time.Time) (int, error) {
	db := claimsql.New(sqlTx{s.db}, sqlite)
	stale, err := db.ReachStale(ctx, scope, since)
	if err != nil {
		return 0, err
	}
	if !stale {
		return db.PeekReach(ctx, scope, since)
	}
	var n int
	if err := s.write(ctx, func(tx *Tx) error {
		var err error
		n, err = claimsql.New(sqlTx{tx}, sqlite).ReachCount(ctx, scope, since)
		return err
	}); err != nil {
		return db.PeekReach(ctx, scope, since)
	}
	return n, nil
}
