package store

import (
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/store/dialect"
)

// The reads of a campaign's rows by state keep an index since messages_due
// holds no row in flight or sent (migration 0061): the planner takes a
// partial index when the query names one state with `=` (an OR of
// equalities in the index's WHERE), the rows sending through
// messages_leases when the campaign's column is unindexed, the rest
// through messages_campaign; none reads the whole table.
func TestReadsByStateKeepAnIndex(t *testing.T) {
	st := openTest(t, newFakeClock())
	c := dialect.SQLite.Unindexed("campaign_id")
	for _, tc := range []struct{ query, want string }{
		{`SELECT id FROM messages WHERE campaign_id = CAST(1 AS INTEGER) AND state = 'pending' AND next_attempt_at <= 5
			ORDER BY next_attempt_at, id LIMIT 64`, "USING INDEX messages_due (campaign_id=? AND state=? AND next_attempt_at<?)"},
		{`SELECT min(updated_at) FROM messages WHERE campaign_id = 1 AND state = 'failed'`, "USING INDEX messages_due (campaign_id=? AND state=?)"},
		{`SELECT id FROM messages WHERE campaign_id = 1 AND state = 'unknown' AND coalesce(updated_at, 0) <= 5`, "USING INDEX messages_due (campaign_id=? AND state=?)"},
		{`UPDATE messages SET state = 'expired' WHERE campaign_id = 1 AND state = 'pending'`, "USING INDEX messages_due (campaign_id=? AND state=?)"},
		{`SELECT count(*) FROM messages WHERE ` + c + ` = 1 AND state = 'sending'`, "USING INDEX messages_leases"},
		{`SELECT phone FROM messages WHERE campaign_id = 1 AND state = 'sent' AND sent_at >= 5`, "USING INDEX messages_campaign (campaign_id=?)"},
		{`SELECT sum(price) FROM messages WHERE campaign_id = 1 AND state IN ('sending', 'sent', 'unknown')`, "USING INDEX messages_campaign (campaign_id=?)"},
		{`DELETE FROM messages WHERE campaign_id = 1`, "USING INDEX messages_campaign (campaign_id=?)"},
	} {
		plan := strings.ReplaceAll(queryPlan(t, st, tc.query), "COVERING ", "")
		if !strings.Contains(plan, tc.want) {
			t.Errorf("%s\nplan: %s\nwant: %s", tc.query, plan, tc.want)
		}
	}
	// What the index holds: neither a claim nor a sent outcome moves it.
	if n := countRows(t, st, `SELECT count(*) FROM sqlite_schema WHERE name = 'messages_due'
		AND sql LIKE '%WHERE state = ''pending'' OR state = ''failed'' OR state = ''unknown'' OR state = ''expired'''`); n != 1 {
		t.Errorf("messages_due holds rows in flight or sent")
	}
}

func queryPlan(t *testing.T, st *Store, query string) string {
	t.Helper()
	rows, err := st.Reader().QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(steps, "; ")
}
