package store

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
)

// countTriggers creates the triggers that keep the counts: counts.sql
// with the delivery ladder's guards filled in from campaign.DeliveryLadder.
var countTriggers = strings.NewReplacer(
	"{{received OLD.delivery}}", receivedSQL("OLD.delivery"),
	"{{received NEW.delivery}}", receivedSQL("NEW.delivery"),
	"{{read}}", quote(campaign.DeliveryRead),
	"{{held}}", quote(campaign.DeliveryHeld),
).Replace(countTriggersSQL)

//go:embed counts.sql
var countTriggersSQL string

// countTriggerNames are the triggers countTriggers creates.
var countTriggerNames = []string{"message_counts_update", "message_counts_delete",
	"attempt_rollup_insert", "attempt_rollup_update", "campaign_counts_delete",
	"delivery_counts_update", "delivery_counts_delete"}

// keptCounts pairs each table that migration 0010's triggers keep with the
// query that computes it from scratch. Rows kept at zero (a state every
// message has left) are the same as rows absent.
var keptCounts = []struct {
	name, cols, kept, recount string
}{
	{
		name: "message_counts",
		cols: "campaign_id, account_id, state, n",
		kept: `SELECT campaign_id, account_id, state, n FROM message_counts WHERE n <> 0`,
		recount: `SELECT campaign_id, coalesce(account_id, 0), state, count(*) FROM messages
			GROUP BY 1, 2, 3`,
	},
	{
		name: "attempt_rollup",
		cols: "campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at",
		kept: `SELECT campaign_id, account_id, minute, attempts, throttled, sent, first_at, last_at, done_at
			FROM attempt_rollup WHERE attempts <> 0`,
		recount: `SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000, count(*),
			count(CASE WHEN t.class IN ('throttled', 'pair-throttled') THEN 1 END),
			count(CASE WHEN t.outcome = 'sent' THEN 1 END),
			min(t.claimed_at), max(t.claimed_at), max(coalesce(t.done_at, t.claimed_at))
			FROM attempts t JOIN messages m ON m.id = t.message_id GROUP BY 1, 2, 3`,
	},
	{
		name: "attempt_firsts",
		cols: "campaign_id, account_id, minute, prev_any, prev_account, n",
		kept: `SELECT campaign_id, account_id, minute, prev_any, prev_account, n FROM attempt_firsts WHERE n <> 0`,
		recount: `SELECT campaign_id, account_id, minute, prev_any, prev_account, count(*) FROM (
			SELECT m.campaign_id, t.account_id, t.claimed_at / 60000000000 AS minute,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id ORDER BY t.id) / 60000000000, -1) AS prev_any,
				coalesce(lag(t.claimed_at) OVER (PARTITION BY t.message_id, t.account_id ORDER BY t.id) / 60000000000, -1) AS prev_account
			FROM attempts t JOIN messages m ON m.id = t.message_id)
			GROUP BY 1, 2, 3, 4, 5`,
	},
	{
		name: "tier_minutes",
		cols: "campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted",
		kept: `SELECT campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted FROM tier_minutes
			WHERE not_sent <> 0 OR not_sent_sent <> 0 OR failed <> 0 OR restricted <> 0`,
		recount: tierRecount,
	},
	{
		name: "delivery_counts",
		cols: "campaign_id, account_id, reported, delivered, read, failed_after_send, held",
		kept: `SELECT campaign_id, account_id, reported, delivered, read, failed_after_send, held FROM delivery_counts
			WHERE reported <> 0 OR delivered <> 0 OR read <> 0 OR failed_after_send <> 0 OR held <> 0`,
		recount: `SELECT campaign_id, coalesce(account_id, 0), count(CASE WHEN NOT ` + deliveryIsSQL("delivery", campaign.DeliveryHeld) + ` THEN delivery END),
			count(CASE WHEN ` + receivedSQL("delivery") + ` THEN 1 END), count(CASE WHEN ` + deliveryIsSQL("delivery", campaign.DeliveryRead) + ` THEN 1 END),
			count(CASE WHEN failed_after_send = 1 THEN 1 END), count(CASE WHEN ` + deliveryIsSQL("delivery", campaign.DeliveryHeld) + ` THEN 1 END)
			FROM messages WHERE delivery IS NOT NULL OR failed_after_send = 1 GROUP BY 1, 2`,
	},
}

// ensureCounts creates the triggers that keep the counts, filling the
// counts from scratch first, when any trigger is missing: on the first open
// after migration 0010, and after a migration that rebuilt messages or
// attempts (dropping a table drops its triggers). Otherwise it costs one
// look at the schema.
func ensureCounts(ctx context.Context, s *Store) error {
	missing := func(q querier) (bool, error) {
		var n int
		err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (`+
			repeated(len(countTriggerNames), "?")+`)`, anys(countTriggerNames)...).Scan(&n)
		return n != len(countTriggerNames), err
	}
	if m, err := missing(s.db); err != nil || !m {
		return err
	}
	return s.write(ctx, func(tx *Tx) error {
		// Another process may have got here first.
		if m, err := missing(tx); err != nil || !m {
			return err
		}
		var b strings.Builder
		for _, k := range keptCounts {
			fmt.Fprintf(&b, "DELETE FROM %s;\nINSERT INTO %s (%s) %s;\n", k.name, k.name, k.cols, k.recount)
		}
		b.WriteString(countTriggers)
		// Not through the statement cache: several statements in one.
		if _, err := tx.tx.ExecContext(tx.ctx, b.String()); err != nil {
			return fmt.Errorf("fill in message counts: %w", err)
		}
		return nil
	})
}

func anys[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// CheckCounts recounts every campaign's messages and attempts from scratch
// and compares them with the counts kept as rows move. It returns an error
// naming each table that differs, with up to five differing rows from each
// side; nil when everything agrees. It reads every message: it is for
// tests and for looking into a database, not for status.
func (s *Store) CheckCounts(ctx context.Context) error {
	// One read transaction, so a writer in another process can't make a
	// consistent database look inconsistent between the two reads.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("check counts: %w", err)
	}
	defer tx.Rollback()
	return checkCountsIn(ctx, tx)
}

func checkCountsIn(ctx context.Context, q querier) error {
	var problems []string
	for _, k := range keptCounts {
		for _, side := range []struct{ label, a, b string }{
			{"kept but not recounted", k.kept, k.recount},
			{"recounted but not kept", k.recount, k.kept},
		} {
			rows, err := q.QueryContext(ctx, side.a+` EXCEPT `+side.b+` LIMIT 5`)
			if err != nil {
				return fmt.Errorf("check %s: %w", k.name, err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return fmt.Errorf("check %s: %w", k.name, err)
				}
				problems = append(problems, fmt.Sprintf("%s %s: %v", k.name, side.label, vals))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("check %s: %w", k.name, err)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("kept counts differ from a recount:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}
