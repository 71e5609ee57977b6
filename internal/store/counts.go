package store

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/store/keptcounts"
	"github.com/wasend/wasend/internal/store/statesql"
)

// countTriggers creates the triggers that keep the counts: counts.sql, a
// template with the delivery ladder's guards filled in from
// campaign.DeliveryLadder and one block written once (recharge).
var countTriggers = statesql.Template("counts.sql", countTriggersSQL)

//go:embed counts.sql
var countTriggersSQL string

// countTriggerNames are the triggers countTriggers creates.
var countTriggerNames = []string{"message_counts_update", "message_counts_delete",
	"attempt_rollup_insert", "attempt_rollup_update", "campaign_counts_delete",
	"delivery_counts_update", "delivery_counts_delete", "cost_counts_update", "cost_counts_delete",
	"cost_counts_campaign_gone", "charge_counts_insert", "charge_counts_update"}

// ensureCounts fills the counts from scratch and creates the triggers
// that keep them when any trigger is missing (see ensureTriggers): on the
// first open after migration 0010, and after a migration that rebuilt
// messages or attempts.
func ensureCounts(ctx context.Context, s *Store) error {
	var b strings.Builder
	for _, k := range keptcounts.All {
		fmt.Fprintf(&b, "DELETE FROM %s;\nINSERT INTO %s (%s) %s;\n", k.Name, k.Name, k.Cols, k.Recount)
	}
	b.WriteString(countTriggers)
	return ensureTriggers(ctx, s, countTriggerNames, "fill in message counts", b.String())
}

// ensureTriggers runs fill (a recount, then the triggers that keep it:
// several statements) when any of the named triggers is missing: the first
// open after the migration that made their table, or after one that rebuilt
// a table they sit on (dropping a table drops its triggers). Otherwise it
// costs one look at the schema.
func ensureTriggers(ctx context.Context, s *Store, names []string, what, fill string) error {
	missing := func(q querier) (bool, error) {
		var n int
		err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (`+
			repeated(len(names), "?")+`)`, anys(names)...).Scan(&n)
		return n != len(names), err
	}
	if m, err := missing(s.db); err != nil || !m {
		return err
	}
	return s.write(ctx, func(tx *Tx) error {
		// Another process may have got here first.
		if m, err := missing(tx); err != nil || !m {
			return err
		}
		// Not through the statement cache: several statements in one.
		if _, err := tx.tx.ExecContext(tx.ctx, fill); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

// addCostCounts counts an import's rows, pending and so may cost, by
// prefix (pricing.NumberPrefix is SQL's substr(phone, 1, 5)): the import
// counts once what a trigger per row would (migration 0010).
func addCostCounts(ctx context.Context, tx *sql.Tx, id int64, prefixes map[string]int64) error {
	for p, n := range prefixes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO cost_counts (campaign_id, prefix, n) VALUES (?, ?, ?)
			ON CONFLICT DO UPDATE SET n = n + excluded.n`, id, p, n); err != nil {
			return fmt.Errorf("count the rows by market: %w", err)
		}
	}
	return nil
}

func anys[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
