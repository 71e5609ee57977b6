package store

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// holdLock takes the database's write lock as another process would (a
// connection of its own) and returns the function that releases it.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err == nil {
		_, err = conn.ExecContext(t.Context(), `BEGIN IMMEDIATE`)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		conn.ExecContext(context.Background(), `ROLLBACK`)
		conn.Close()
		db.Close()
	}
}

// A write and an import wait for another process's write lock (the writer
// connection has no busy timeout of its own: writes wait in lockwait,
// imports in SQLite) and go through once it is released; past the busy
// timeout both fail busy.
func TestWritesWaitForAnotherProcess(t *testing.T) {
	writes := []struct {
		name string
		run  func(ctx context.Context, st *Store) error
	}{
		{"write", func(ctx context.Context, st *Store) error {
			return st.SetTier(ctx, campaign.TierNew, campaign.Limits{Rate: 5, Burst: 5, DailyCap: 50})
		}},
		{"import", func(ctx context.Context, st *Store) error {
			im, err := st.Import(ctx, campaign.Campaign{Name: "c", Fingerprint: "fp", Source: "c.csv",
				Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en"}})
			if err != nil {
				return err
			}
			defer im.Rollback()
			if _, err := im.Add(ctx, campaign.Message{Line: 2, Input: phone(1), Phone: phone(1)}); err != nil {
				return err
			}
			_, err = im.Commit(ctx)
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name+" after the lock is released", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wasend.db")
			st := openAt(t, path, newFakeClock())
			release := holdLock(t, path)
			// The lock is held while the write begins (on a slow machine it
			// may begin later: the test then holds less, never wrongly).
			time.AfterFunc(50*time.Millisecond, release)
			if err := w.run(t.Context(), st); err != nil {
				t.Fatalf("%s while another process held the lock for 50 ms: %v", w.name, err)
			}
		})
		t.Run(w.name+" past the busy timeout", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wasend.db")
			openAt(t, path, newFakeClock()) // migrated
			st, err := Open(t.Context(), path, driver.Options{Now: newFakeClock().Now, Location: time.UTC, BusyTimeout: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			release := holdLock(t, path)
			defer release()
			if err := w.run(t.Context(), st); !isBusy(err) {
				t.Fatalf("%s while another process held the lock past the busy timeout: %v; want a busy error", w.name, err)
			}
		})
	}
}

// BenchmarkWriteBehindAnotherProcess times writes while another process
// (a connection of its own) takes the write lock for 2 ms, 1 ms after it
// last had it, as a busy sender's transactions do: how long a write waits beyond the
// lock's release is SQLite's busy handler's sleep (1, 2, 5 … 100 ms) or
// lockwait's pause (≤ 1 ms). The writes come at random instants; the
// figures are their times, waits included.
//
//	go test -run '^$' -bench WriteBehindAnotherProcess -benchtime 300x ./internal/store
func BenchmarkWriteBehindAnotherProcess(b *testing.B) {
	path := filepath.Join(b.TempDir(), "wasend.db")
	st, err := Open(b.Context(), path, driver.Options{Now: newFakeClock().Now, Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	other, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=0&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tx, err := other.Begin() // BEGIN IMMEDIATE: the lock, tried every 0.1 ms
			if err != nil {
				time.Sleep(100 * time.Microsecond)
				continue
			}
			tx.Exec(`INSERT OR REPLACE INTO settings (key, value) VALUES ('bench', 'x')`)
			time.Sleep(2 * time.Millisecond)
			tx.Commit()
			time.Sleep(time.Millisecond)
		}
	}()
	// The writes come at random instants, as webhook commits do.
	waits := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(time.Duration(rand.Int64N(int64(3 * time.Millisecond))))
		t := time.Now()
		if err := st.SetTier(b.Context(), campaign.TierNew, campaign.Limits{Rate: float64(i + 1), Burst: 5, DailyCap: 50}); err != nil {
			b.Fatal(err)
		}
		waits[i] = time.Since(t)
	}
	slices.Sort(waits)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(waits[b.N/2]), "p50-ms")
	b.ReportMetric(ms(waits[b.N*99/100]), "p99-ms")
	b.ReportMetric(ms(waits[b.N-1]), "max-ms")
	b.StopTimer()
	close(stop)
	<-stopped
}
