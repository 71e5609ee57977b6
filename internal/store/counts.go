package store

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
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

// KeptCount is a table of counts the triggers keep as rows move (Cols),
// the query that reads what is kept, and the query that computes it from
// scratch. Rows kept at zero (a state every message has left) are the
// same as rows absent.
type KeptCount struct{ Name, Cols, Kept, Recount string }

// KeptCounts are every kept count: Open fills each from its Recount when
// its triggers are missing, and storetest.CheckCounts holds Kept equal to
// Recount after every move a test makes.
var KeptCounts = []KeptCount{
	{
		Name: "message_counts",
		Cols: "campaign_id, account_id, state, n",
		Kept: `SELECT campaign_id, account_id, state, n FROM message_counts WHERE n <> 0`,
		Recount: `SELECT campaign_id, coalesce(account_id, 0), state, count(*) FROM messages
			GROUP BY 1, 2, 3`,
	},
	{
		Name: "attempt_rollup",
		Cols: "campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at",
		Kept: `SELECT campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at
			FROM attempt_rollup WHERE attempts <> 0`,
		Recount: `SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000, count(*),
			count(CASE WHEN t.class IN ('throttled', 'pair-throttled') THEN 1 END),
			count(CASE WHEN t.outcome = 'sent' THEN 1 END),
			min(t.claimed_at), max(t.claimed_at), max(coalesce(t.done_at, t.claimed_at))
			FROM attempts t JOIN messages m ON m.id = t.message_id GROUP BY 1, 2, 3`,
	},
	{
		Name: "attempt_firsts",
		Cols: "campaign_id, account_id, minute, prev_any, prev_account, n",
		Kept: `SELECT campaign_id, account_id, minute, prev_any, prev_account, n FROM attempt_firsts WHERE n <> 0`,
		Recount: `SELECT campaign_id, account_id, minute, prev_any, prev_account, count(*) FROM (
			SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000 AS minute,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id ORDER BY t.id) / 60000000000, -1) AS prev_any,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id, t.account_id ORDER BY t.id) / 60000000000, -1) AS prev_account
			FROM attempts t JOIN messages m ON m.id = t.message_id) AS firsts
			GROUP BY 1, 2, 3, 4, 5`,
	},
	{
		Name: "tier_minutes",
		Cols: "campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted",
		Kept: `SELECT campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted FROM tier_minutes
			WHERE not_sent <> 0 OR not_sent_sent <> 0 OR failed <> 0 OR restricted <> 0`,
		Recount: tierRecount,
	},
	{
		Name: "delivery_counts",
		Cols: "campaign_id, account_id, reported, delivered, read, failed_after_send, held",
		Kept: `SELECT campaign_id, account_id, reported, delivered, read, failed_after_send, held FROM delivery_counts
			WHERE reported <> 0 OR delivered <> 0 OR read <> 0 OR failed_after_send <> 0 OR held <> 0`,
		Recount: `SELECT campaign_id, coalesce(account_id, 0), count(CASE WHEN NOT ` + deliveryIsSQL("delivery", campaign.DeliveryHeld) + ` THEN delivery END),
			count(CASE WHEN ` + receivedSQL("delivery") + ` THEN 1 END), count(CASE WHEN ` + deliveryIsSQL("delivery", campaign.DeliveryRead) + ` THEN 1 END),
			count(CASE WHEN failed_after_send = 1 THEN 1 END), count(CASE WHEN ` + deliveryIsSQL("delivery", campaign.DeliveryHeld) + ` THEN 1 END)
			FROM messages WHERE delivery IS NOT NULL OR failed_after_send = 1 GROUP BY 1, 2`,
	},
	{
		Name:    "cost_counts",
		Cols:    "campaign_id, prefix, n",
		Kept:    `SELECT campaign_id, prefix, n FROM cost_counts WHERE n <> 0`,
		Recount: `SELECT campaign_id, substr(phone, 1, 5), count(*) FROM messages WHERE state IN ('pending', 'sending', 'sent', 'unknown') GROUP BY 1, 2`,
	},
	{
		Name:    "message_charges",
		Cols:    "message_id, " + chargeKey,
		Kept:    `SELECT message_id, ` + chargeKey + ` FROM message_charges`,
		Recount: `SELECT message_id, ` + chargeKey + ` FROM message_charge_now`,
	},
	{
		Name:    "charge_counts",
		Cols:    chargeKey + ", n",
		Kept:    `SELECT ` + chargeKey + `, n FROM charge_counts WHERE n <> 0`,
		Recount: `SELECT ` + chargeKey + `, count(*) FROM message_charge_now GROUP BY 1, 2, 3, 4, 5, 6`,
	},
}

// chargeKey is what charge_counts counts messages by.
const chargeKey = "campaign_id, prefix, day, category, pricing_type, billable"

// ensureCounts fills the counts from scratch and creates the triggers
// that keep them when any trigger is missing (see ensureTriggers): on the
// first open after migration 0010, and after a migration that rebuilt
// messages or attempts.
func ensureCounts(ctx context.Context, s *Store) error {
	var b strings.Builder
	for _, k := range KeptCounts {
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
