package pgstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/keptcounts"
	"github.com/wasend/wasend/internal/store/storetest"
)

// costHistory is a seeded history, in SQL both drivers run as written, of
// what moves the kept cost counts: imports (counted as Importer.Commit
// counts them), rows moving into and out of the states that may cost
// (failures, expiries, retries), and status webhooks kept before their
// row is known and matched later, or matched at once, out of order, with
// pricing categories, pricing types (regular and the free ones), billable
// flags, a second wamid for a row sent again, and a status relinked; last,
// a campaign deleted with its rows.
// Each step is a few statements, after which the counts are whole.
func costHistory(seed uint64) [][]string {
	r := rand.New(rand.NewPCG(seed, 28))
	phones := []string{"+44770090", "+1415555", "+9198123", "+2637712", "+9991", "+3461234", "+880171", "+7701234"}
	var (
		out  [][]string
		rows []int
		next = 1
	)
	imp := func(campaign, n int) {
		var vals []string
		for range n {
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, 'x', '%s%03d')", next, campaign, next, phones[r.IntN(len(phones))], next))
			rows = append(rows, next)
			next++
		}
		out = append(out, []string{fmt.Sprintf(`INSERT INTO campaigns (id, name, fingerprint, source, kind, created_at)
			VALUES (%d, 'c%d', 'f%d', 's', 'template', 0)`, campaign, campaign, campaign),
			`INSERT INTO messages (id, campaign_id, line, input, phone) VALUES ` + strings.Join(vals, ", "),
			fmt.Sprintf(`INSERT INTO message_counts (campaign_id, account_id, state, n)
				SELECT campaign_id, 0, 'pending', count(*) FROM messages WHERE campaign_id = %d GROUP BY campaign_id`, campaign),
			fmt.Sprintf(`INSERT INTO cost_counts (campaign_id, prefix, n)
				SELECT campaign_id, substr(phone, 1, 5), count(*) FROM messages WHERE campaign_id = %d GROUP BY 1, 2`, campaign)})
	}
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	status := func(id int, matched string) string {
		day := int64(20_000 + r.IntN(3))
		at := day*86_400_000_000_000 + r.Int64N(86_400_000_000_000)
		billable := pick("NULL", "0", "1")
		return fmt.Sprintf(`INSERT INTO message_statuses (wamid, status, at, message_id, pricing, pricing_type, billable, received_at)
			VALUES ('w%d%s', '%s', %d, %s, '%s', '%s', %s, 0) ON CONFLICT (wamid, status) DO NOTHING`,
			id, pick("", "", "", "r"), pick("sent", "delivered", "delivered", "read", "failed"), at, matched,
			pick("", "marketing", "marketing", "utility", "marketing_lite", "authentication"),
			pick("", "regular", "regular", "free_customer_service", "free_entry_point"), billable)
	}
	imp(1, 30)
	imp(2, 20)
	for i := range 300 {
		if i == 150 {
			imp(3, 15)
		}
		id := rows[r.IntN(len(rows))]
		var q string
		switch k := r.IntN(20); {
		case k < 5:
			q = fmt.Sprintf(`UPDATE messages SET state = '%s' WHERE id = %d`,
				pick("pending", "sending", "sent", "sent", "failed", "unknown", "expired"), id)
		case k < 11:
			q = status(id, "NULL")
		case k < 15:
			q = fmt.Sprintf(`UPDATE message_statuses SET message_id = %d WHERE message_id IS NULL
				AND wamid IN ('w%d', 'w%dr')`, id, id, id)
		case k < 19:
			q = status(id, fmt.Sprint(id))
		default:
			q = fmt.Sprintf(`UPDATE message_statuses SET message_id = %d
				WHERE wamid = 'w%d' AND message_id IS NOT NULL`, id, rows[r.IntN(len(rows))])
		}
		out = append(out, []string{q})
	}
	return append(out, []string{`DELETE FROM campaigns WHERE id = 2`})
}

// TestCostCountsMatchSQLite runs costHistory on both drivers: after every
// step Postgres keeps cost_counts, message_charges and charge_counts as
// SQLite does, SQLite's kept counts equal a recount (storetest.CheckCounts),
// every few steps and at the end so do Postgres's, and each message's
// charge on both is what a query written apart from the store's says.
func TestCostCountsMatchSQLite(t *testing.T) {
	ctx := t.Context()
	w, _, _ := openTwins(t)
	var kept []keptcounts.Table
	for _, k := range keptcounts.All {
		if k.Name == "cost_counts" || k.Name == "message_charges" || k.Name == "charge_counts" {
			kept = append(kept, k)
		}
	}
	if len(kept) != 3 {
		t.Fatalf("keptcounts.All lacks cost_counts, message_charges or charge_counts: %d found", len(kept))
	}
	// The view the triggers and the recount read (message_charge_now),
	// written another way: both drivers' charges must equal this too.
	oracle := `SELECT m.id, m.campaign_id, substr(m.phone, 1, 5), d.at / 86400000000000, coalesce(p.pricing, ''),
		coalesce(p.pricing_type, ''), coalesce(p.billable, -1)
		FROM messages m JOIN (SELECT message_id, min(at) AS at FROM message_statuses
			WHERE status IN ('delivered', 'read') GROUP BY message_id) d ON d.message_id = m.id
		LEFT JOIN (SELECT message_id, pricing, pricing_type, billable,
			row_number() OVER (PARTITION BY message_id ORDER BY at DESC, CASE status WHEN 'delivered' THEN 1
				WHEN 'failed' THEN 2 WHEN 'read' THEN 3 ELSE 4 END) AS k
			FROM message_statuses WHERE pricing <> '') p ON p.message_id = m.id AND p.k = 1
		ORDER BY 1`
	history := costHistory(1)
	charged := ""
	w.Play(t, history, func(i int, step []string) {
		q := step[len(step)-1]
		if err := storetest.CheckCounts(ctx, w.Lite.Reader()); err != nil {
			t.Fatalf("SQLite after step %d (%s): %v", i, q, err)
		}
		for _, k := range kept {
			sorted := k.Kept + " ORDER BY " + k.Cols
			if got, want := storetest.Text(t, w.PG, sorted), storetest.Text(t, w.Lite, sorted); got != want {
				t.Fatalf("after step %d (%s): Postgres keeps in %s\n%s\nSQLite keeps\n%s", i, q, k.Name, got, want)
			}
			if i%25 == 0 || i == len(history)-1 {
				for _, side := range []string{k.Kept + " EXCEPT " + k.Recount, k.Recount + " EXCEPT " + k.Kept} {
					if diff := storetest.Text(t, w.PG, side); diff != "" {
						t.Fatalf("Postgres after step %d: %s differs from a recount:\n%s", i, k.Name, diff)
					}
				}
			}
		}
		const charges = `SELECT message_id, campaign_id, prefix, day, category, pricing_type, billable
			FROM message_charges ORDER BY 1`
		w.Each(func(name string, d driver.Driver) {
			if got, want := storetest.Text(t, d, charges), storetest.Text(t, d, oracle); got != want {
				t.Fatalf("%s after step %d (%s): message_charges\n%s\nwant\n%s", name, i, q, got, want)
			}
		})
		if i == len(history)-2 {
			charged = storetest.Text(t, w.Lite, `SELECT count(DISTINCT category || pricing_type || billable), sum(n) FROM charge_counts WHERE n <> 0`)
		}
	})
	// The history charged a variety: several pricings, many messages.
	var kinds, n int
	if _, err := fmt.Sscan(charged, &kinds, &n); err != nil || kinds < 10 || n < 20 {
		t.Errorf("the history charged %q (kinds, messages); want a varied history", charged)
	}
}
