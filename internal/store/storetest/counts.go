package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/keptcounts"
)

// CheckCounts recounts every campaign's messages and attempts from scratch
// and compares them with the counts kept as rows move (keptcounts.All).
// It returns an error naming each table that differs, with up to five
// differing rows from each side; nil when everything agrees. It reads
// every message: it is for tests, not for status.
func CheckCounts(ctx context.Context, db *sql.DB) error {
	// One read transaction, so a writer in another process can't make a
	// consistent database look inconsistent between the two reads.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("check counts: %w", err)
	}
	defer tx.Rollback()
	return Recount(ctx, tx)
}

// Recount is CheckCounts inside tx, which may hold changes of its own.
func Recount(ctx context.Context, tx *sql.Tx) error {
	var problems []string
	for _, k := range keptcounts.All {
		for _, side := range []struct{ label, a, b string }{
			{"kept but not recounted", k.Kept, k.Recount},
			{"recounted but not kept", k.Recount, k.Kept},
		} {
			rows, err := tx.QueryContext(ctx, side.a+` EXCEPT `+side.b+` LIMIT 5`)
			if err != nil {
				return fmt.Errorf("check %s: %w", k.Name, err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals, err := scanAny(rows, len(cols))
				if err != nil {
					rows.Close()
					return fmt.Errorf("check %s: %w", k.Name, err)
				}
				problems = append(problems, fmt.Sprintf("%s %s: %v", k.Name, side.label, vals))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("check %s: %w", k.Name, err)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("kept counts differ from a recount:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// HoldCounts holds the kept counts equal to a recount (CheckCounts), and
// each campaign's Counts and queue equal to its messages themselves, after
// step.
func HoldCounts(t *testing.T, st driver.Driver, step string, ids ...int64) {
	t.Helper()
	db := st.Reader()
	if err := CheckCounts(t.Context(), db); err != nil {
		t.Fatalf("after %s: %v", step, err)
	}
	for _, id := range ids {
		got, err := st.Counts(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := campaign.Counts{}
		rows, err := db.QueryContext(t.Context(), `SELECT state, count(*) FROM messages WHERE campaign_id = ? GROUP BY state`, id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s campaign.State
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			want[s] = n
		}
		rows.Close()
		if !maps.Equal(got, want) {
			t.Fatalf("after %s: campaign %d counts %v, messages say %v", step, id, got, want)
		}
		q, err := readmodel.New(st).CampaignQueue(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		var wq readmodel.Queue
		if err := db.QueryRowContext(t.Context(), `SELECT
			count(CASE WHEN state = 'pending' AND next_attempt_at <= ?1 THEN 1 END),
			count(CASE WHEN state = 'pending' AND next_attempt_at > ?1 AND window_wait = 0 THEN 1 END),
			count(CASE WHEN state = 'sending' THEN 1 END),
			count(CASE WHEN state = 'pending' AND next_attempt_at > ?1 AND window_wait = 1 THEN 1 END)
			FROM messages WHERE campaign_id = ?2`, st.Now().UnixNano(), id).Scan(&wq.Ready, &wq.Waiting, &wq.InFlight, &wq.WindowWait); err != nil {
			t.Fatal(err)
		}
		if q.Ready != wq.Ready || q.Waiting != wq.Waiting || q.InFlight != wq.InFlight || q.WindowWait != wq.WindowWait {
			t.Fatalf("after %s: campaign %d queue %+v, messages say %+v", step, id, q, wq)
		}
	}
}
