package pgstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The bulk writes after a claim, the mark of the requests' start (Start)
// and the sent outcomes (RecordAll), find their rows by their key (the
// start's attempts too, among a history of earlier sends), whatever the
// statistics say: without any (a new database), and with
// statistics taken while no row was in flight (an analyze after an
// import), their plans walked a partial index on state instead, every
// entry of it at each call (messages_leases: every row claimed since the
// last vacuum; messages_phone_sent: every row sent), or scanned the table.
func TestWritesAfterClaimFindRowsByKey(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		analyze bool
	}{
		{"no statistics", false},
		{"statistics of nothing in flight", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(ctx, pgtest.Start(t).NewDB(t, ""), Options{Now: func() time.Time { return t0 }, Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			c := storetest.MustCampaign(t, st, "marks", 20000)
			// Attempts of earlier sends, as a database that sent before holds.
			if _, err := st.pool.Exec(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome)
				SELECT m.id, a.first, 1, 1, 'retry' FROM messages AS m CROSS JOIN (SELECT min(id) AS first FROM accounts) AS a`); err != nil {
				t.Fatal(err)
			}
			if tc.analyze {
				if _, err := st.pool.Exec(ctx, `ANALYZE messages, attempts`); err != nil {
					t.Fatal(err)
				}
			}
			cs, err := claim.New(st).ClaimN(ctx, c.ID, "r", t0, 120)
			if err != nil {
				t.Fatal(err)
			}
			n := len(cs)
			ids, fences, ats, wamids := make([]int64, n), make([]int64, n), make([]int64, n), make([]string, n)
			atts := make([]int64, n)
			for i, cl := range cs {
				ids[i], fences[i], ats[i], wamids[i] = cl.Message.ID, cl.Fence, t0.UnixNano(), "wamid-"+cl.Message.Phone
				atts[i] = cl.AttemptID
			}
			for _, w := range []struct {
				name, sql string
				args      []any
				keys      map[string][]string // the indexes each table may be read by: its rows' keys
			}{
				{"the mark of the requests' start", startSQL, []any{atts, ids, fences},
					map[string][]string{"messages": {"messages_pkey"}, "attempts": {"attempts_pkey", "attempts_message"}}},
				{"the sent outcomes", recordSentBulkSQL, []any{ids, wamids, ats, fences}, map[string][]string{"messages": {"messages_pkey"}}},
			} {
				var plan []struct{ Plan planNode }
				if err := st.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+w.sql, w.args...).Scan(&plan); err != nil {
					t.Fatal(err)
				}
				for table, keys := range w.keys {
					scans := plan[0].Plan.scans(table)
					if len(scans) == 0 {
						t.Fatalf("%s: no read of %s in the plan %+v", w.name, table, plan[0].Plan)
					}
					for _, s := range scans {
						if s.Type != "Index Scan" || !slices.Contains(keys, s.Index) {
							t.Errorf("%s (%d rows) reads %s by a %s (index %q), want an Index Scan of %s",
								w.name, n, table, s.Type, s.Index, strings.Join(keys, " or "))
						}
					}
				}
			}
		})
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// scans are the nodes under n (n among them) that read table rel, but the
// statement's own target (the ModifyTable node names it too).
func (n planNode) scans(rel string) []planNode {
	var out []planNode
	if n.Relation == rel && n.Type != "ModifyTable" {
		out = append(out, n)
	}
	for _, c := range n.Plans {
		out = append(out, c.scans(rel)...)
	}
	return out
}
