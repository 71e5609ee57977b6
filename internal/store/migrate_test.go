package store

import (
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
)

// A database made before migration 0004, with a campaign under way,
// migrates with every row, id and reference intact, foreign keys back on,
// and without the unique index on numbers.
func TestMigrationRebuildsMessages(t *testing.T) {
	path, old, exec := oldDatabase(t, "0004")
	exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
		VALUES ('a', '100', 'new', 'TOKEN_A', 0, 5, 0, '2026-03-02')`)
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, text, created_at) VALUES ('c', 'fp', 'c.csv', 'text', 'Hi', 0)`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, body, state, attempts, account_id, wamid, sent_at, extras)
		VALUES (1, 2, '0151 1', '+491511', 'Hi', 'sent', 1, 1, 'wamid.1', 7, '{"header":"h"}')`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, body) VALUES (1, 3, '0151 2', '+491512', 'Hi')`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, body) VALUES (1, 4, '0151 3', '+491513', 'Hi')`)
	exec(`DELETE FROM messages WHERE id = 3`) // AUTOINCREMENT must not hand out 3 again
	exec(`INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, class) VALUES (1, 1, 5, 7, 'sent', 'ok')`)
	const dump = `SELECT group_concat(id || '|' || campaign_id || '|' || line || '|' || input || '|' || phone || '|' || params || '|' ||
		body || '|' || state || '|' || attempts || '|' || coalesce(account_id, '-') || '|' || coalesce(wamid, '-') || '|' ||
		coalesce(sent_at, '-') || '|' || extras, ';') FROM (SELECT * FROM messages ORDER BY id)`
	var before string
	if err := old.QueryRow(dump).Scan(&before); err != nil {
		t.Fatal(err)
	}
	old.Close()

	st := openAt(t, path, newFakeClock())
	var after string
	if err := st.db.QueryRow(dump).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("messages after migration:\n%s\nbefore:\n%s", after, before)
	}
	if n := countRows(t, st, `SELECT count(*) FROM attempts WHERE message_id = 1`); n != 1 {
		t.Errorf("attempts of message 1 after migration: %d, want 1", n)
	}
	var schema string
	if err := st.db.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'messages'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(schema, "UNIQUE") || strings.Contains(schema, "messages_new") {
		t.Errorf("messages is still\n%s", schema)
	}
	if n := countRows(t, st, `SELECT count(*) FROM sqlite_schema WHERE name = 'messages_due'`); n != 1 {
		t.Errorf("messages_due index missing")
	}
	if n := countRows(t, st, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d rows fail foreign_key_check", n)
	}

	// Every pooled connection has foreign keys on again.
	conns := make([]*sql.Conn, 3)
	for i := range conns {
		var err error
		if conns[i], err = st.db.Conn(t.Context()); err != nil {
			t.Fatal(err)
		}
		var on int
		if err := conns[i].QueryRowContext(t.Context(), `PRAGMA foreign_keys`).Scan(&on); err != nil || on != 1 {
			t.Errorf("connection %d: foreign_keys = %d, %v", i, on, err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	if _, err := st.db.Exec(`INSERT INTO attempts (message_id, account_id, claimed_at) VALUES (99, 1, 1)`); err == nil {
		t.Errorf("an attempt of no message was stored: foreign keys are off")
	}

	im, err := st.Import(t.Context(), testCampaign("fp2"))
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	if reason, err := im.Add(t.Context(), campaign.Message{Line: 2, Input: "+491511", Phone: "+491511", Body: "Hi"}); err != nil || reason != "" {
		t.Fatalf("Add = %q, %v", reason, err)
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var id int
	if err := st.db.QueryRow(`SELECT id FROM messages WHERE campaign_id = ?`, c.ID).Scan(&id); err != nil || id != 4 {
		t.Errorf("first message after migration has id %d, %v; want 4", id, err)
	}

	// Opening again applies nothing twice.
	st.Close()
	st = openAt(t, path, newFakeClock())
	files, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM schema_migrations`); n != len(files) {
		t.Errorf("%d migrations recorded, want %d", n, len(files))
	}
}

// A database from before migration 0010, with campaigns under way, gets
// its counts and rollups filled in: equal to a recount, and read by
// Counts and CampaignStats.
func TestMigrationBackfillsCounts(t *testing.T) {
	path, old, exec := oldDatabase(t, "0010")
	for _, a := range []string{"a", "b"} {
		exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
			VALUES (?, ?, 'new', 'TOKEN', 0, 5, 0, '2026-03-02')`, a, "100"+a)
	}
	for _, fp := range []string{"one", "two"} {
		exec(`INSERT INTO campaigns (name, fingerprint, source, kind, text, created_at) VALUES (?, ?, 'c.csv', 'text', 'Hi', 0)`, fp, fp)
	}
	minute := func(m int) int64 { return t0.Add(time.Duration(m) * time.Minute).UnixNano() }
	// Campaign 1: a sent row tried on a then b (throttled first), a failed
	// row, a pending one never tried. Campaign 2: one row in flight.
	exec(`INSERT INTO messages (campaign_id, line, input, phone, state, attempts, account_id) VALUES
		(1, 2, 'x', '+491511', 'sent', 2, 2), (1, 3, 'x', '+491512', 'failed', 1, 1),
		(1, 4, 'x', '+491513', 'pending', 0, NULL), (2, 2, 'x', '+491511', 'sending', 1, 1)`)
	exec(`INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, class) VALUES
		(1, 1, ?, ?, 'retry', 'throttled'), (1, 2, ?, ?, 'sent', 'ok'), (2, 1, ?, ?, 'failed', 'permanent'),
		(4, 1, ?, NULL, NULL, NULL)`, minute(0), minute(0)+1, minute(3), minute(3)+1, minute(1), minute(1)+1, minute(70))
	old.Close()

	clk := newFakeClock()
	clk.Set(t0.Add(62 * time.Minute)) // the last hour starts at minute 2
	st := openAt(t, path, clk)
	if err := st.CheckCounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]campaign.Counts{
		1: {campaign.Sent: 1, campaign.Failed: 1, campaign.Pending: 1},
		2: {campaign.Sending: 1},
	} {
		if got, err := st.Counts(t.Context(), id); err != nil || !maps.Equal(got, want) {
			t.Errorf("campaign %d counts %v, %v; want %v", id, got, err, want)
		}
	}
	stats, err := readmodel.New(st).CampaignStats(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := readmodel.Stats{Attempts: 3, Throttled: 1, MessagesAttempted: 2, HourAttempts: 1, HourThrottled: 0, HourMessages: 1}
	if stats != want {
		t.Errorf("stats %+v, want %+v", stats, want)
	}
}

// A later migration that rebuilds messages drops its triggers with the old
// table: the next open creates them again and recounts what moved without
// them.
func TestCountTriggersComeBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wasend.db")
	clk := newFakeClock()
	st := openAt(t, path, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	c := mustCampaign(t, st, "rebuilt", 4)
	mustClaim(t, st, c.ID, "r1", t0)
	if _, err := st.db.Exec(`DROP TRIGGER message_counts_update; DROP TRIGGER attempt_rollup_insert;
		UPDATE messages SET state = 'failed' WHERE state = 'pending';
		INSERT INTO attempts (message_id, account_id, claimed_at) SELECT id, 1, 5 FROM messages WHERE state = 'failed'`); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckCounts(t.Context()); err == nil {
		t.Fatal("rows moved without triggers, yet the counts agree: the test proves nothing")
	}
	st.Close()

	st = openAt(t, path, clk)
	if err := st.CheckCounts(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name <> 'suppressions'
		AND name NOT LIKE 'reach_counts%' AND name NOT LIKE 'tier_minutes%'`); n != len(countTriggerNames) {
		t.Errorf("%d triggers after reopening, want %d", n, len(countTriggerNames))
	}
	if got, err := st.Counts(t.Context(), c.ID); err != nil || got[campaign.Failed] != 3 || got[campaign.Sending] != 1 {
		t.Errorf("counts after reopening: %v, %v; want 3 failed, 1 sending", got, err)
	}
}

// Migration 0006: a campaign made before it keeps its old fingerprint as
// its source key, so an unchanged command still finds it without reading
// its file, and it has no recipients key yet (the runner computes one from
// its messages).
func TestMigrationKeepsSourceKeys(t *testing.T) {
	path, old, exec := oldDatabase(t, "0005")
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, template, lang, created_at) VALUES ('c', 'fp-old', 'c.csv', 'template', 't', 'en', 0)`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone) VALUES (1, 2, 'a', '+4915100000001')`)
	old.Close()

	st := openAt(t, path, newFakeClock())
	c, err := readmodel.New(st).CampaignBySource(t.Context(), "fp-old")
	if err != nil || c.ID != 1 {
		t.Fatalf("CampaignBySource(old fingerprint) = %+v, %v", c, err)
	}
	im, err := st.Import(t.Context(), campaign.Campaign{Name: "new", Source: "c.csv", Spec: c.Spec})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	sibs, err := im.SameMessage(t.Context())
	if err != nil || len(sibs) != 1 || sibs[0].Campaign.ID != 1 || sibs[0].RecipientsKey != "" {
		t.Errorf("SameMessage = %+v, %v; want campaign 1 without a recipients key", sibs, err)
	}
	var phones []string
	if err := im.EachNumber(t.Context(), 1, func(p string) { phones = append(phones, p) }); err != nil || len(phones) != 1 {
		t.Errorf("EachNumber = %v, %v", phones, err)
	}
}

// A send log from before migration 0023 (keyed by account first, with an
// index by phone) comes over row for row into the log keyed by phone,
// without that index; lookups by phone and the cascade from accounts read
// and delete the same rows as before.
func TestMigrationKeysContactLogByPhone(t *testing.T) {
	path, old, exec := oldDatabase(t, "0023")
	for _, a := range []string{"a", "b"} {
		exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
			VALUES (?, ?, 'new', 'TOKEN', 0, 5, 0, '2026-03-02')`, a, "10"+a)
	}
	exec(`INSERT INTO contact_log (account_id, phone, last_at, prev_at, sent_at) VALUES
		(1, '+491511', 30, 10, 30), (2, '+491511', 40, 0, 0), (2, '+491512', 50, 20, 20), (1, '+491513', 60, 0, 0)`)
	old.Close()
	st := openAt(t, path, newFakeClock())
	ctx := t.Context()

	dump := func() []string {
		t.Helper()
		rows, err := st.db.QueryContext(ctx, `SELECT account_id, phone, last_at, prev_at, sent_at FROM contact_log ORDER BY account_id, phone`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var a, last, prev, sent int64
			var p string
			if err := rows.Scan(&a, &p, &last, &prev, &sent); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d %s %d %d %d", a, p, last, prev, sent))
		}
		return out
	}
	want := []string{"1 +491511 30 10 30", "1 +491513 60 0 0", "2 +491511 40 0 0", "2 +491512 50 20 20"}
	if got := dump(); !slices.Equal(got, want) {
		t.Errorf("send log after migration 0023: %q, want %q", got, want)
	}
	// The primary key is the first of the table's indexes, phone first.
	var keys []string
	rows, err := st.db.QueryContext(ctx, `SELECT l.name || ':' || group_concat(i.name, ',') FROM pragma_index_list('contact_log') l,
		pragma_index_info(l.name) i GROUP BY l.name ORDER BY l.name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if want := []string{"contact_log_window:account_id,last_at", "sqlite_autoindex_contact_log_1:phone,account_id"}; !slices.Equal(keys, want) {
		t.Errorf("indexes on contact_log: %q, want %q", keys, want)
	}

	got, err := claimsql.New(sqlTx{st.db}, sqlite).LastContacts(ctx, []string{"+491511", "+491512", "+491514"})
	if err != nil {
		t.Fatal(err)
	}
	wantLast := map[string]driver.LastContact{
		"+491511": {At: fromNanos(40), SentAt: fromNanos(30), Account: 1},
		"+491512": {At: fromNanos(50), SentAt: fromNanos(20), Account: 2},
	}
	if !maps.EqualFunc(got, wantLast, func(a, b driver.LastContact) bool {
		return a.At.Equal(b.At) && a.SentAt.Equal(b.SentAt) && a.Account == b.Account
	}) {
		t.Errorf("send log lookups after migration 0023: %+v, want %+v", got, wantLast)
	}

	if _, err := st.db.ExecContext(ctx, `DELETE FROM accounts WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(), want[:2]; !slices.Equal(got, want) {
		t.Errorf("send log after deleting account 2: %q, want %q", got, want)
	}
}

// Migration 0063 names in the send log the attempt of each claim still in
// flight (its answer, recorded by this version, binds the recipient); an
// answered one keeps its sent_at and names none.
func TestMigrationNamesClaimsInFlight(t *testing.T) {
	path, old, exec := oldDatabase(t, "0063")
	exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
		VALUES ('a', '100', 'new', 'TOKEN_A', 0, 5, 0, '2026-03-02')`)
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, text, created_at) VALUES ('c', 'fp', 'c.csv', 'text', 'Hi', 0)`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, body, state, attempts, account_id, wamid, sent_at)
		VALUES (1, 2, '0151 1', '+491511', 'Hi', 'sent', 1, 1, 'wamid.1', 7)`)
	exec(`INSERT INTO messages (campaign_id, line, input, phone, body, state, attempts, account_id)
		VALUES (1, 3, '0151 2', '+491512', 'Hi', 'sending', 1, 1)`)
	exec(`INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, class) VALUES (1, 1, 5, 7, 'sent', 'ok')`)
	exec(`INSERT INTO attempts (message_id, account_id, claimed_at) VALUES (2, 1, 9)`)
	exec(`INSERT INTO contact_log (account_id, phone, last_at, sent_at) VALUES (1, '+491511', 5, 7), (1, '+491512', 9, 0)`)
	old.Close()
	st := openAt(t, path, newFakeClock())
	rows, err := st.db.QueryContext(t.Context(), `SELECT phone, coalesce(last_attempt, 0), sent_at FROM contact_log ORDER BY phone`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var p string
		var named, sent int64
		if err := rows.Scan(&p, &named, &sent); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d %d", p, named, sent))
	}
	if want := []string{"+491511 0 7", "+491512 2 0"}; !slices.Equal(got, want) {
		t.Errorf("send log after migration %v, want %v", got, want)
	}
}

// Rows in flight when a database is upgraded past migration 0062 keep the
// start mark they had on messages.started, now on their claim's attempt
// (the latest): at the end of their lease a row never started goes back
// to pending, one started (or with no attempt) becomes unknown.
func TestMigrationMovesStartMarksToAttempts(t *testing.T) {
	path, old, exec := oldDatabase(t, "0062")
	exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
		VALUES ('a', '10a', 'new', 'TOKEN', 0, 5, 0, '2026-03-02')`)
	exec(`INSERT INTO campaigns (name, fingerprint, source, kind, created_at) VALUES ('c', 'fp', 'c.csv', 'template', 0)`)
	for _, m := range []struct {
		phone    string
		started  int
		attempts int // the last one open
	}{{"+491511", 0, 2}, {"+491512", 1, 2}, {"+491513", 0, 1}, {"+491514", 1, 0}} {
		exec(`INSERT INTO messages (campaign_id, line, input, phone, state, account_id, runner_id, attempts, lease_until, started)
			VALUES (1, 2, ?1, ?1, 'sending', 1, 'gone', ?2, 1, ?3)`, m.phone, m.attempts, m.started)
		for i := 1; i <= m.attempts; i++ {
			exec(`INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome)
				SELECT max(id), 1, ?1, CASE WHEN ?1 < ?2 THEN ?1 END, CASE WHEN ?1 < ?2 THEN 'retry' END FROM messages`, i, m.attempts)
		}
	}
	old.Close()
	st := openAt(t, path, newFakeClock())
	if n := countRows(t, st, `SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'started'`); n != 0 {
		t.Errorf("messages.started is still there after migration 0062")
	}
	if _, err := st.RecoverOrphans(t.Context(), time.Unix(0, 10), func(campaign.Runner) bool { return true }); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{1: "pending", 2: "unknown", 3: "pending", 4: "unknown"} {
		if got := readMessage(t, st, id).state; got != want {
			t.Errorf("message %d in flight across the upgrade is %s after its lease ran out, want %s", id, got, want)
		}
	}
}
