package store

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
)

// explain runs EXPLAIN (or EXPLAIN QUERY PLAN: what) of q, its parameters
// NULL, and returns column col of each row.
func explain(t *testing.T, st *Store, what, q string, col int) []string {
	t.Helper()
	w, err := st.writer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := w.Raw(func(dc any) error {
		stmt, err := dc.(*sqlite3.SQLiteConn).Prepare(what + " " + q)
		if err != nil {
			return err
		}
		defer stmt.Close()
		rows, err := stmt.(*sqlite3.SQLiteStmt).Query(make([]driver.Value, stmt.NumInput()))
		if err != nil {
			return err
		}
		defer rows.Close()
		vals := make([]driver.Value, len(rows.Columns()))
		for rows.Next(vals) == nil {
			out = append(out, fmt.Sprint(vals[col]))
		}
		return nil
	}); err != nil {
		t.Fatalf("%s %s: %v", what, q, err)
	}
	return out
}

// tempTables counts the temporary b-trees q's program opens, its triggers'
// included (EXPLAIN lists their sub-programs): each a page cache built and
// torn down at every run, ~15,000-20,000 instructions (session 19).
func tempTables(t *testing.T, st *Store, q string) int {
	t.Helper()
	n := 0
	for _, op := range explain(t, st, "EXPLAIN", q, 1) {
		if op == "OpenEphemeral" || op == "OpenAutoindex" {
			n++
		}
	}
	return n
}

// TestSendingPathTemporaryTables holds the sending path's statements to the
// temporary tables SQLite cannot do without: a multi-row UPDATE of a table
// with triggers lists its rows in one first (an UPDATE … FROM's join is
// that list).
func TestSendingPathTemporaryTables(t *testing.T) {
	st := openTest(t, newFakeClock())
	for _, c := range []struct {
		name string
		q    string
		want int
	}{
		// One for the claim's rows of every account: a statement an
		// account cost two each (the row list, the ids' IN list).
		{"claim", fmt.Sprintf(claimSQL, repeated(32, "(?, ?, ?)")), 1},
		// A minute's answers, by its row's key.
		{"answers", countAnswerSQL, 0},
	} {
		if n := tempTables(t, st, c.q); n != c.want {
			t.Errorf("%s opens %d temporary tables, want %d", c.name, n, c.want)
		}
	}
	// The claim's join reads its VALUES in order and finds each row by its id.
	if plan := strings.Join(explain(t, st, "EXPLAIN QUERY PLAN", fmt.Sprintf(claimSQL, repeated(32, "(?, ?, ?)")), 3), "; "); !strings.Contains(plan, "SEARCH messages USING INTEGER PRIMARY KEY") {
		t.Errorf("the claim's plan is %q, want the rows found by their id", plan)
	}
}

// TestClaimRowsOfSeveralAccounts: the claim's one statement moves each row
// through its own claim's account and quota epoch.
func TestClaimRowsOfSeveralAccounts(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	unlimitedTiers(t, st)
	for i, name := range []string{"a1", "a2", "a3"} {
		a := mustAccount(t, st, name, campaign.TierNew, campaign.Overrides{})
		if _, err := st.db.ExecContext(t.Context(), `UPDATE accounts SET quota_epoch = ? WHERE id = ?`, 10*(i+1), a.ID); err != nil {
			t.Fatal(err)
		}
	}
	c := mustCampaign(t, st, "spring", 40)
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 30)
	if err != nil {
		t.Fatal(err)
	}
	accounts := map[int64]bool{}
	for _, cl := range cs {
		accounts[cl.Account.ID] = true
		var (
			state, runner         string
			account, epoch, lease int64
		)
		if err := st.db.QueryRowContext(t.Context(), `SELECT state, account_id, quota_epoch, runner_id, lease_until
			FROM messages WHERE id = ?`, cl.Message.ID).Scan(&state, &account, &epoch, &runner, &lease); err != nil {
			t.Fatal(err)
		}
		if state != string(campaign.Sending) || account != cl.Account.ID || epoch != cl.QuotaEpoch || epoch != 10*account ||
			runner != "r1" || lease != t0.Add(campaign.LeaseTerm).UnixNano() {
			t.Errorf("message %d: %s, account %d epoch %d runner %s lease %d; want sending through account %d epoch %d (10×account), r1, lease %d",
				cl.Message.ID, state, account, epoch, runner, lease, cl.Account.ID, cl.QuotaEpoch, t0.Add(campaign.LeaseTerm).UnixNano())
		}
	}
	if len(cs) != 30 || len(accounts) < 2 {
		t.Fatalf("claimed %d rows through %d accounts, want 30 through several", len(cs), len(accounts))
	}
	var pending int
	if err := st.db.QueryRowContext(t.Context(), `SELECT count(*) FROM messages WHERE campaign_id = ? AND state = 'pending'`, c.ID).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 10 {
		t.Errorf("%d rows pending after the claim, want 10", pending)
	}
}

// TestClaimReadsBuildNoTable holds the claim's reads, as a claim runs them,
// to no temporary b-tree: the send log's numbers are a VALUES list joined
// to the log (an IN list was one), the competitors' runners are scanned
// (an automatic index was built for them).
func TestClaimReadsBuildNoTable(t *testing.T) {
	st := openTest(t, newFakeClock())
	unlimitedTiers(t, st)
	mustAccount(t, st, "a1", campaign.TierNew, campaign.Overrides{})
	c := mustCampaign(t, st, "spring", 20)
	other := mustCampaign(t, st, "summer", 20)
	if _, err := st.ClaimN(t.Context(), other.ID, "r2", t0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 12); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for q := range st.stmts {
		for _, name := range []string{"SELECT contact_log.phone", "SELECT c.priority"} {
			if strings.HasPrefix(q, name) {
				found[name] = true
				if n := tempTables(t, st, q); n != 0 {
					t.Errorf("%s… opens %d temporary tables, want none", name, n)
				}
			}
		}
	}
	if len(found) != 2 {
		t.Fatalf("the claims ran %v of the two reads", found)
	}
}
