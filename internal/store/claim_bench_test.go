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
