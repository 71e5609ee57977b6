package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// BenchmarkClaimRecord measures the store's share of sending with the
// limits out of the way (storetest.BenchClaimRecord, which pgstore runs
// too): 20,000 rows claimed and recorded 64 at a time by one runner.
func BenchmarkClaimRecord(b *testing.B) { storetest.BenchClaimRecord(b, sqliteBench(nil)) }

// BenchmarkClaimStartRecord is BenchmarkClaimRecord with every request
// marked started (Start) before its outcome is recorded, by transactions
// of 1, 8 (what the engine's starter groups on loopback) or 64 rows: what
// the lease's marks cost, per transaction and per row.
func BenchmarkClaimStartRecord(b *testing.B) {
	benchSizes(b, "starts=", []int{1, 8, 64}, func(h *storetest.ClaimBench, n int) { h.Starts = n })
}

// BenchmarkClaimRecordBatch is BenchmarkClaimRecord with 32, 96, 144 (what
// the engine's recorder commits on loopback) and 256 rows (its most) a
// transaction: what a transaction costs against a row.
func BenchmarkClaimRecordBatch(b *testing.B) {
	benchSizes(b, "rows=", []int{32, 96, 144, 256}, func(h *storetest.ClaimBench, n int) { h.Batch = n })
}

// benchSizes runs BenchmarkClaimRecord once for each of ns, set on it.
func benchSizes(b *testing.B, name string, ns []int, set func(h *storetest.ClaimBench, n int)) {
	for _, n := range ns {
		b.Run(fmt.Sprint(name, n), func(b *testing.B) {
			h := sqliteBench(nil)
			set(&h, n)
			storetest.BenchClaimRecord(b, h)
		})
	}
}

// BenchmarkClaimRecordLinked is BenchmarkClaimRecord with every recipient
// linked to a user id (recipient_links) and as many other people's links
// and suppressed user ids beside them: the suppression check at each claim
// follows the links.
func BenchmarkClaimRecordLinked(b *testing.B) { storetest.BenchClaimRecord(b, sqliteBench(link)) }

// BenchmarkClaimRecordHistory is BenchmarkClaimRecord with every
// recipient sent a message by each of two campaigns before, two and three
// days ago, from two of the accounts: what the claim's look-up of the
// send log (the sticky sender) and its write of a pair met before cost
// with a history to find.
func BenchmarkClaimRecordHistory(b *testing.B) { storetest.BenchClaimRecord(b, sqliteBench(history)) }

func sqliteBench(prepare func(ctx context.Context, b *testing.B, d driver.Driver, n int)) storetest.ClaimBench {
	return storetest.ClaimBench{
		NewDB: func(b *testing.B) string { return filepath.Join(b.TempDir(), "bench.db") },
		Open: func(b *testing.B, db string, now func() time.Time) driver.Driver {
			st, err := store.Open(b.Context(), db, driver.Options{Now: now, Location: time.UTC})
			if err != nil {
				b.Fatal(err)
			}
			return st
		},
		Ledger:  func(d driver.Driver) storetest.Ledger { return claim.New(d) },
		Prepare: prepare,
	}
}

// link gives each of the n recipients a user id, and as many others one
// too, half of those suppressed by it.
func link(ctx context.Context, b *testing.B, d driver.Driver, n int) {
	db, err := sql.Open("sqlite3", "file:"+d.Path()+"?_busy_timeout=10000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var list []campaign.Suppression
	for j := range 2 * n {
		user := fmt.Sprintf("US.%d", 1000+j)
		if _, err := tx.ExecContext(ctx, `INSERT INTO recipient_links (user_id, phone, seen_at) VALUES (?, ?, 0)`,
			user, storetest.Phone(j)); err != nil {
			b.Fatal(err)
		}
		if j >= n && j%2 == 0 {
			list = append(list, campaign.Suppression{Phone: user, Reason: "STOP"})
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Suppress(ctx, list); err != nil {
		b.Fatal(err)
	}
}

// history gives each of the n recipients two earlier sends, each from
// another account, with their attempts, and logs them in the send log as
// their claims did: a send log with the claim's attempt (migration 0063)
// names it, an older one keeps the time it was accepted.
func history(ctx context.Context, b *testing.B, d driver.Driver, n int) {
	for k := range 2 {
		im, err := d.Import(ctx, campaign.Campaign{Name: fmt.Sprint("before", k), Fingerprint: fmt.Sprint("fp-before", k),
			Source: "before.csv", Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}}})
		if err != nil {
			b.Fatal(err)
		}
		for j := range n {
			m := campaign.Message{Line: j + 2, Input: storetest.Phone(j), Phone: storetest.Phone(j), Params: []string{"P"}}
			if _, err := im.Add(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := im.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+d.Path()+"?_busy_timeout=10000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var named bool
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('contact_log') WHERE name = 'last_attempt'`).Scan(&named); err != nil {
		b.Fatal(err)
	}
	logged := `INSERT INTO contact_log (account_id, phone, last_at, sent_at) SELECT m.account_id, m.phone, m.sent_at, m.sent_at`
	if named {
		logged = `INSERT INTO contact_log (account_id, phone, last_at, last_attempt) SELECT m.account_id, m.phone, m.sent_at, a.id`
	}
	day := int64(24 * time.Hour)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE messages SET state = 'sent', attempts = 1, account_id = 1 + (campaign_id + line) % 3, wamid = 'wamid.' || id,
			sent_at = ? - campaign_id * ? WHERE campaign_id > 1`, []any{storetest.T0.UnixNano(), day}},
		{`INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, class)
			SELECT id, account_id, sent_at, sent_at, 'sent', 'ok' FROM messages WHERE campaign_id > 1 ORDER BY id`, nil},
		{`UPDATE campaigns SET state = 'finished', finished_at = ? WHERE id > 1`, []any{storetest.T0.UnixNano()}},
		{logged + ` FROM messages m JOIN attempts a ON a.message_id = m.id WHERE m.campaign_id > 1`, nil},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			b.Fatal(err)
		}
	}
}
