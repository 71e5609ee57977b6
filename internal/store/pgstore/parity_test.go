package pgstore

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// deliberate are the differences between the two drivers' schemas that
// are meant, each with why. A line of schemaDiff not listed here fails
// TestSchemaParity, and so does a listed one that no longer occurs.
var deliberate = map[string]string{
	// SQLite's store creates messages_spend at a campaign's first budget
	// (store/pricing.go, SetBudget); Postgres's 0006 creates it with the
	// table, its WHEN passing over unpriced rows.
	"trigger messages_spend on messages: only in Postgres": "made by migration 0006, not at the first budget",
	// SQLite's index holds the rowid (id) after its columns; Postgres's
	// names it (pg 0015), for attempt_rollup_insert's attempt before.
	"index attempts_message: attempts(message_id) in SQLite, attempts(message_id,id) in Postgres": "the same index: SQLite's keeps the rowid",
	// SQLite has no functions: Postgres's tier_minutes_share (0006) is a
	// view there whose INSTEAD OF trigger adds the share (tier_counts.sql).
	"trigger tier_minutes_add on tier_minutes_share: only in SQLite": "SQLite's spelling of Postgres's function",
	// SQLite's 0061 keeps the rows in flight and sent out of messages_due,
	// so that a claim and a sent outcome move no entry of it, and reads a
	// campaign's other rows through messages_campaign; pg 0029 leaves
	// Postgres's claims (pgstore's own) as they are.
	"index messages_due: messages(campaign_id,state,next_attempt_at,id) partial in SQLite, messages(campaign_id,state,next_attempt_at,id) in Postgres": "SQLite's claims and outcomes move no entry of it (0061)",
	"index messages_campaign on messages(campaign_id): only in SQLite":                                                                                 "SQLite's reads of a campaign's rows sent or in lists of states (0061)",
}

// schemas migrates a fresh SQLite file and a fresh Postgres database and
// reads both schemas.
func schemas(t *testing.T) (lite, pg schema, dsn string) {
	t.Helper()
	ctx := t.Context()
	sl, err := store.Open(ctx, filepath.Join(t.TempDir(), "parity.db"), driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	if lite, err = readSQLite(ctx, sl.Reader()); err != nil {
		t.Fatal(err)
	}
	dsn = pgtest.Start(t).NewDB(t, "")
	ps, err := Open(ctx, dsn, Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	if pg, err = readPostgres(ctx, ps.pool); err != nil {
		t.Fatal(err)
	}
	return lite, pg, dsn
}

// TestSchemaParity holds the Postgres migrations to SQLite's: every table,
// column (by class), key, unique set, index and trigger of one is in the
// other, but for the deliberate differences.
func TestSchemaParity(t *testing.T) {
	lite, pg, _ := schemas(t)
	if len(lite.Tables) < 30 || len(pg.Tables) < 30 {
		t.Fatalf("read %d SQLite tables and %d Postgres tables: the schemas were not read", len(lite.Tables), len(pg.Tables))
	}
	diffs := schemaDiff(lite, pg)
	for _, d := range diffs {
		if _, ok := deliberate[d]; !ok {
			t.Errorf("%s", d)
		}
	}
	for d := range deliberate {
		if !slices.Contains(diffs, d) {
			t.Errorf("listed as deliberate but no longer differs (delete it from deliberate): %s", d)
		}
	}
}

// The comparison names each kind of difference: a change to the Postgres
// schema after migrating shows up as the lines it should.
func TestSchemaDiffNamesEachDifference(t *testing.T) {
	lite, _, dsn := schemas(t)
	ps, err := Open(t.Context(), dsn, Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	for _, q := range []string{
		`DROP TABLE waba_marketing`,
		`ALTER TABLE messages DROP COLUMN price CASCADE`,
		`ALTER TABLE messages ADD COLUMN pg_only BIGINT`,
		`ALTER TABLE templates ALTER COLUMN synced_at TYPE TEXT`,
		`ALTER TABLE settings ALTER COLUMN value DROP NOT NULL`,
		`DROP INDEX messages_put_back`,
		`CREATE INDEX messages_phone ON messages (phone)`,
		`DROP TRIGGER tier_minutes_insert ON attempts`,
		`ALTER TABLE pricing_cards DROP CONSTRAINT pricing_cards_currency_effective_key`,
	} {
		if _, err := ps.pool.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pg, err := readPostgres(t.Context(), ps.pool)
	if err != nil {
		t.Fatal(err)
	}
	diffs := schemaDiff(lite, pg)
	for _, want := range []string{
		"table waba_marketing: only in SQLite",
		"column messages.price (integer): only in SQLite",
		"column messages.pg_only (integer): only in Postgres",
		"column templates.synced_at: integer in SQLite, text in Postgres",
		"column settings.value: NOT NULL in SQLite only",
		"index messages_put_back on messages(campaign_id,error_code) partial: only in SQLite",
		"index messages_phone on messages(phone): only in Postgres",
		"trigger tier_minutes_insert on attempts: only in SQLite",
		"unique (currency,effective) on pricing_cards: only in SQLite",
	} {
		if !slices.Contains(diffs, want) {
			t.Errorf("no line %q in:\n%s", want, strings.Join(diffs, "\n"))
		}
	}
}

// schemaDiff names, one line each, what differs between SQLite's schema
// and Postgres's: tables, columns (with their class and nullness), keys,
// unique sets, indexes and triggers.
func schemaDiff(lite, pg schema) []string {
	var out []string
	only := func(what string, inLite bool) {
		out = append(out, fmt.Sprintf("%s: only in %s", what, driverName(inLite)))
	}
	for _, name := range union(lite.Tables, pg.Tables) {
		tl, tp := lite.Tables[name], pg.Tables[name]
		if tl == nil || tp == nil {
			only("table "+name, tl != nil)
			continue
		}
		cl, cp := columnsByName(tl), columnsByName(tp)
		for _, c := range union(cl, cp) {
			l, inL := cl[c]
			p, inP := cp[c]
			switch {
			case !inL || !inP:
				col := l
				if !inL {
					col = p
				}
				only(fmt.Sprintf("column %s.%s (%s)", name, c, col.Class), inL)
			case l.Class != p.Class:
				out = append(out, fmt.Sprintf("column %s.%s: %s in SQLite, %s in Postgres", name, c, l.Class, p.Class))
			case l.NotNull != p.NotNull:
				out = append(out, fmt.Sprintf("column %s.%s: NOT NULL in %s only", name, c, driverName(l.NotNull)))
			}
		}
		if kl, kp := strings.Join(tl.Key, ","), strings.Join(tp.Key, ","); kl != kp {
			out = append(out, fmt.Sprintf("table %s: key (%s) in SQLite, (%s) in Postgres", name, kl, kp))
		}
		for _, u := range tl.Uniques {
			if !slices.Contains(tp.Uniques, u) && !slices.Contains(pg.uniqueIndexes(name), u) {
				only(fmt.Sprintf("unique (%s) on %s", u, name), true)
			}
		}
		for _, u := range tp.Uniques {
			if !slices.Contains(tl.Uniques, u) && !slices.Contains(lite.uniqueIndexes(name), u) {
				only(fmt.Sprintf("unique (%s) on %s", u, name), false)
			}
		}
	}
	for _, name := range union(lite.Indexes, pg.Indexes) {
		il, inL := lite.Indexes[name]
		ip, inP := pg.Indexes[name]
		switch {
		case !inL:
			only(fmt.Sprintf("index %s on %s", name, ip), false)
		case !inP:
			only(fmt.Sprintf("index %s on %s", name, il), true)
		case il != ip:
			out = append(out, fmt.Sprintf("index %s: %s in SQLite, %s in Postgres", name, il, ip))
		}
	}
	for _, name := range union(lite.Triggers, pg.Triggers) {
		tl, inL := lite.Triggers[name]
		tp, inP := pg.Triggers[name]
		switch {
		case !inL:
			only(fmt.Sprintf("trigger %s on %s", name, tp), false)
		case !inP:
			only(fmt.Sprintf("trigger %s on %s", name, tl), true)
		case tl != tp:
			out = append(out, fmt.Sprintf("trigger %s: on %s in SQLite, on %s in Postgres", name, tl, tp))
		}
	}
	return out
}

func driverName(sqlite bool) string {
	if sqlite {
		return "SQLite"
	}
	return "Postgres"
}

func columnsByName(t *table) map[string]column {
	m := map[string]column{}
	for _, c := range t.Columns {
		m[c.Name] = c
	}
	return m
}

func union[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return sortedKeys(seen)
}

// keptCountsScript is one history of attempts and priced rows, in SQL
// both dialects run as written: what the triggers that keep counts see.
var keptCountsScript = []string{
	`INSERT INTO accounts (id, name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
		VALUES (1, 'a', '111', 'new', 'T', 0, 1, 0, '2026-01-01'), (2, 'b', '222', 'new', 'T', 0, 1, 0, '2026-01-01')`,
	`INSERT INTO campaigns (id, name, fingerprint, source, kind, created_at)
		VALUES (1, 'c1', 'f1', 's', 'template', 0), (2, 'c2', 'f2', 's', 'template', 0)`,
	`INSERT INTO messages (id, campaign_id, line, input, phone)
		VALUES (1, 1, 1, 'x', '+1'), (2, 1, 2, 'x', '+2'), (3, 1, 3, 'x', '+3'), (4, 1, 4, 'x', '+4'), (5, 2, 1, 'x', '+5')`,
	`INSERT INTO attempts (id, message_id, account_id, claimed_at, class, outcome, error_code) VALUES
		(1, 1, 1, 600000000005, 'not-sent', 'sent', NULL),
		(2, 1, 1, 600000000006, 'not-sent', NULL, NULL),
		(3, 2, 1, 600000000007, 'permanent', 'failed', 131000),
		(4, 2, 2, 660000000000, 'transient', 'failed', 131048),
		(5, 3, 2, 660000000001, 'permanent', 'sent', NULL),
		(6, 4, 1, 720000000000, 'throttled', NULL, NULL),
		(7, 5, 2, 720000000000, 'not-sent', NULL, NULL),
		(8, 5, 1, 720000000001, 'permanent', 'failed', 131064)`,
	`UPDATE attempts SET class = 'permanent', outcome = 'failed' WHERE id = 6`,
	`UPDATE attempts SET class = 'transient' WHERE id = 1`,
	`UPDATE attempts SET account_id = 2 WHERE id = 3`,
	`UPDATE attempts SET claimed_at = claimed_at + 60000000000 WHERE id = 4`,
	`DELETE FROM attempts WHERE id = 2`,
	`DELETE FROM campaigns WHERE id = 2`,
	// A budget as SetBudget leaves it on SQLite: rows priced, committed
	// counted, then rows move through the states it counts.
	`UPDATE messages SET price = 100 WHERE campaign_id = 1`,
	`UPDATE messages SET state = 'sending' WHERE id IN (1, 2, 3)`,
	`UPDATE messages SET state = 'sent' WHERE id = 1`,
	`UPDATE messages SET state = 'failed' WHERE id = 2`,
	`UPDATE messages SET state = 'unknown' WHERE id = 3`,
	`UPDATE messages SET price = 250 WHERE id = 1`,
}

// keptCounts reads the kept tables the script moves on d, as text.
func keptCounts(t *testing.T, d driver.Driver) string {
	t.Helper()
	return storetest.Text(t, d, `SELECT campaign_id, account_id, minute, not_sent, not_sent_sent, failed, restricted FROM tier_minutes
			WHERE not_sent <> 0 OR not_sent_sent <> 0 OR failed <> 0 OR restricted <> 0 ORDER BY 1, 2, 3`) +
		storetest.Text(t, d, `SELECT campaign_id, committed FROM campaign_spend ORDER BY 1`)
}

// openTwins opens a fresh store on each driver, closed when t ends.
func openTwins(t *testing.T) (storetest.Twins, *store.Store, *Store) {
	t.Helper()
	ctx := t.Context()
	sl, err := store.Open(ctx, filepath.Join(t.TempDir(), "twin.db"), driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.Close() })
	ps, err := Open(ctx, pgtest.Start(t).NewDB(t, ""), Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	return storetest.Twins{Lite: sl, PG: ps}, sl, ps
}

// TestKeptCountsMatchSQLite runs one history of writes on both drivers:
// Postgres's plpgsql triggers keep tier_minutes and campaign_spend exactly
// as SQLite's triggers do, and as a count from scratch says.
func TestKeptCountsMatchSQLite(t *testing.T) {
	ctx := t.Context()
	w, sl, ps := openTwins(t)
	for i, q := range keptCountsScript {
		if strings.HasPrefix(q, "UPDATE messages SET price = 100") {
			// SetBudget makes SQLite's trigger and counts what is committed.
			if err := sl.SetBudget(ctx, 1, 1_000_000, "USD", func(string) pricing.Micros { return 100 }); err != nil {
				t.Fatal(err)
			}
			if _, err := ps.pool.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
			if _, err := ps.pool.Exec(ctx, `INSERT INTO campaign_spend (campaign_id, committed) SELECT 1, coalesce(sum(price), 0)
				FROM messages WHERE campaign_id = 1 AND state IN ('sending', 'sent', 'unknown')`); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w.Exec(t, fmt.Sprint("statement ", i), q)
	}
	want, got := keptCounts(t, w.Lite), keptCounts(t, w.PG)
	if want == "" || !strings.Contains(want, "1 350") {
		t.Fatalf("SQLite kept nothing the script should have moved:\n%s", want)
	}
	if got != want {
		t.Errorf("Postgres keeps\n%s\nSQLite keeps\n%s", got, want)
	}
	// The history's counts from scratch, as 0006's fill counts them.
	if _, err := ps.pool.Exec(ctx, `DELETE FROM tier_minutes`); err != nil {
		t.Fatal(err)
	}
	body, err := migrations.ReadFile("migrations/0006_sqlite_0041_0046.sql")
	if err != nil {
		t.Fatal(err)
	}
	fill := string(body)[strings.Index(string(body), "INSERT INTO tier_minutes (campaign_id"):]
	fill = fill[:strings.Index(fill, ";")]
	if _, err := ps.pool.Exec(ctx, fill); err != nil {
		t.Fatal(err)
	}
	if recount := keptCounts(t, w.PG); recount != want {
		t.Errorf("counted from scratch\n%s\nkept\n%s", recount, want)
	}
}
