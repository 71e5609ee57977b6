package store

import (
	"regexp"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

// The CHECK constraints admit their values without an IN list SQLite
// builds into a temporary table for every row written (migration 0064),
// and still refuse any other value.
func TestChecksBuildNoTableARow(t *testing.T) {
	st := openTest(t, newFakeClock())
	ctx := t.Context()
	c, err := st.Import(ctx, testCampaign("fp-checks"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Rollback()
	if _, err := c.Add(ctx, campaign.Message{Line: 2, Input: phone(1), Phone: phone(1), Body: "Hi"}); err != nil {
		t.Fatal(err)
	}
	camp, err := c.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A list of three constants or more, as SQLite would build it.
	inList := regexp.MustCompile(`(?i)\bIN\s*\(\s*'[^']*'\s*,\s*'[^']*'\s*,`)
	rows, err := st.db.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		if m := inList.FindString(sql); m != "" {
			t.Errorf("table %s checks with an IN list (%s…): SQLite builds it for every row written", name, m)
		}
	}
	rows.Close()

	for _, q := range []string{
		`UPDATE messages SET state = 'sent', delivery = 'read' WHERE id = 1`,
		`UPDATE campaigns SET state = 'paused' WHERE id = 1`,
	} {
		plan, err := st.db.QueryContext(ctx, `EXPLAIN `+q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := plan.Columns()
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		for plan.Next() {
			if err := plan.Scan(vals...); err != nil {
				t.Fatal(err)
			}
			if op := (*vals[1].(*any)).(string); op == "OpenEphemeral" {
				t.Errorf("%s opens a temporary table", q)
			}
		}
		plan.Close()
	}

	for _, q := range []string{
		`UPDATE messages SET state = 'lost' WHERE campaign_id = ?`,
		`UPDATE messages SET delivery = 'seen' WHERE campaign_id = ?`,
		`UPDATE campaigns SET state = 'gone' WHERE id = ?`,
	} {
		_, err := st.db.ExecContext(ctx, q, camp.ID)
		if err == nil || !strings.Contains(err.Error(), "CHECK") {
			t.Errorf("%s: err = %v, want a CHECK constraint failed", q, err)
		}
	}
}
