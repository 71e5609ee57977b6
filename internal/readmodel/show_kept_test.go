package readmodel_test

import (
	"cmp"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// scanned runs a query over the database and prints its rows, one string.
func scanned(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := ""
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprint(vals...) + ";"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// putBackScan groups a campaign's rows put back by their error code from a
// pass over its pending rows in line order (on SQLite through the index
// of due rows, not the partial one show reads): how many, the earliest
// next try, the message of the group's first line; most first, then by
// code.
func putBackScan(t *testing.T, b backend, db *sql.DB, id int64) string {
	t.Helper()
	indexed := ""
	if b.dialect == readmodel.SQLite {
		indexed = "INDEXED BY messages_due"
	}
	rows, err := db.QueryContext(t.Context(), b.dialect.Rebind(`SELECT error_code, next_attempt_at, coalesce(error_message, '')
		FROM messages `+indexed+` WHERE campaign_id = ? AND state = 'pending' AND error_code IS NOT NULL ORDER BY line, id`), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type group struct {
		code, n int
		next    int64
		sample  string
	}
	var groups []*group
	byCode := map[int]*group{}
	for rows.Next() {
		var (
			code int
			next int64
			msg  string
		)
		if err := rows.Scan(&code, &next, &msg); err != nil {
			t.Fatal(err)
		}
		g := byCode[code]
		if g == nil {
			g = &group{code: code, next: next, sample: msg}
			byCode[code] = g
			groups = append(groups, g)
		}
		g.n++
		g.next = min(g.next, next)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(groups, func(x, y *group) int { return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.code, y.code)) })
	out := ""
	for _, g := range groups {
		out += fmt.Sprint(g.code, g.n, g.next, g.sample) + ";"
	}
	return out
}

// campaign show reads its claims put back without a request from the kept
// counts, and its rows put back and failed statuses through partial
// indexes: at every step of random attempts, rows put back and failed
// webhooks over two campaigns, it says what the passes over the
// campaign's attempts and messages said before (their index forced).
func TestCampaignDetailMatchesScans(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		ctx := t.Context()
		db := st.Reader()
		var accts []int64
		for _, name := range []string{"a", "b", "c"} {
			accts = append(accts, storetest.MustAccount(t, st, name, campaign.TierActive, storetest.Limited(100, 100, 1000)).ID)
		}
		c1 := storetest.MustCampaign(t, st, "one", 40)
		storetest.MustCampaign(t, st, "two", 40)
		rng := rand.New(rand.NewPCG(46, 3))
		pick := func(vs ...any) any { return vs[rng.IntN(len(vs))] }
		for step := range 120 {
			now := at(0).Add(time.Duration(step) * time.Minute)
			msg := 1 + rng.Int64N(80)
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.ExecContext(ctx, b.dialect.Rebind(q), args...); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
			}
			exec(`INSERT INTO attempts (message_id, account_id, claimed_at, outcome, error_code, class) VALUES (?, ?, ?, ?, ?, ?)`,
				msg, accts[rng.IntN(len(accts))], now.UnixNano(), pick(nil, "sent", "retry", "failed"),
				pick(nil, 131026, 131048, 130429), pick(nil, "sent", "not-sent", "permanent", "transient"))
			exec(`UPDATE messages SET state = ?, error_code = ?, error_message = ?, next_attempt_at = ? WHERE id = ?`,
				pick("pending", "pending", "failed", "sent"), pick(nil, 131026, 131000, 130429),
				pick("boom", "later", nil), now.Add(time.Hour).UnixNano(), msg)
			if rng.IntN(3) == 0 {
				exec(`INSERT INTO message_statuses (wamid, status, at, message_id, error_code, received_at) VALUES (?, ?, ?, ?, ?, ?)
					ON CONFLICT DO NOTHING`,
					fmt.Sprint("w", step), pick("failed", "failed", "delivered"), now.Unix(), msg, pick(nil, 131026, 131049), now.UnixNano())
			}
			if step%10 != 9 {
				continue
			}
			d, err := readmodel.New(st).CampaignDetail(ctx, c1.ID)
			if err != nil {
				t.Fatal(err)
			}
			var notSent int
			if err := db.QueryRowContext(ctx, b.dialect.Rebind(`SELECT count(*) FROM messages m JOIN attempts t ON t.message_id = m.id
				WHERE m.campaign_id = ? AND t.class = 'not-sent'`), c1.ID).Scan(&notSent); err != nil {
				t.Fatal(err)
			}
			if d.Stats.NotSent != notSent {
				t.Errorf("step %d: %d claims put back without a request, the attempts say %d", step, d.Stats.NotSent, notSent)
			}
			got := ""
			for _, g := range d.PutBack {
				got += fmt.Sprint(g.Code, g.Count, g.NextTry.UnixNano(), g.Sample) + ";"
			}
			want := putBackScan(t, b, db, c1.ID)
			if got != want {
				t.Errorf("step %d: put back %s, the messages say %s", step, got, want)
			}
			got = ""
			for _, g := range d.FailedStatuses {
				got += fmt.Sprint(g.Code, g.Count, g.KeptFailed, g.PutBack) + ";"
			}
			want = scanned(t, db, b.dialect.Rebind(`SELECT coalesce(s.error_code, 0) AS code, count(*),
				count(CASE WHEN m.state = 'failed' THEN 1 END), count(CASE WHEN m.state = 'pending' THEN 1 END)
				FROM messages m JOIN message_statuses s ON s.message_id = m.id
				WHERE m.campaign_id = ? AND s.status = 'failed'
				GROUP BY code ORDER BY count(*) DESC, code`), c1.ID)
			if got != want {
				t.Errorf("step %d: failed statuses %s, the messages say %s", step, got, want)
			}
			if d.Stats.NotSent == 0 || len(d.PutBack) == 0 || len(d.FailedStatuses) == 0 {
				if step == 119 {
					t.Errorf("nothing to compare at the end: %d not sent, %v, %v", d.Stats.NotSent, d.PutBack, d.FailedStatuses)
				}
			}
		}
	})
}
