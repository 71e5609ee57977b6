package pgstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
	"github.com/wasend/wasend/internal/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// template is the migrated database every test's database copies.
const template = "wasend_migrated"

// newDB is a fresh migrated database for t.
func newDB(t *testing.T) string {
	t.Helper()
	srv := pgtest.Start(t)
	srv.Template(t, template, func(ctx context.Context, dsn string) error {
		st, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
		if err != nil {
			return err
		}
		if err := st.Close(); err != nil {
			return err
		}
		// Each test's first open fixes its own zone of quota days, as
		// with a new SQLite file.
		_, err = exec(ctx, dsn, `DELETE FROM settings WHERE key = 'timezone'`)
		return err
	})
	return srv.NewDB(t, template)
}

// openCampaign opens a fresh database on a simulated clock with one
// active account and a campaign of rows rows: the race tests' start.
func openCampaign(t *testing.T, name string, rows int) (string, *pgstore.Store, campaign.Campaign) {
	t.Helper()
	dsn := newDB(t)
	st, err := pgstore.Open(t.Context(), dsn, pgstore.Options{Now: storetest.NewClock().Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	return dsn, st, storetest.MustCampaign(t, st, name, rows)
}

// waitForLockWait returns once a statement of the test's database waits
// on a lock (where: a further condition on pg_stat_activity), failing t if
// done reports first or nothing waits within 20 s: a race test's proof that
// the second transaction waits for the first.
func waitForLockWait(t *testing.T, st *pgstore.Store, where string, done <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		var waiting int
		if err := st.Reader().QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND `+where).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("finished without waiting for the lock: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing waited on the lock")
		}
		time.Sleep(10 * time.Millisecond) // polling for a lock wait, not a rate
	}
}

// exec runs one statement wasend never runs, straight on the database: the
// suite's back door.
func exec(ctx context.Context, dsn, q string, args ...any) (int64, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer c.Close(ctx)
	tag, err := c.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

// TestConformance runs the store's conformance suite on Postgres. Where a
// sub-test meets a method not implemented yet it skips, naming the method:
// `go test -run TestConformance -v` lists what is left.
func TestConformance(t *testing.T) {
	dsns := map[driver.Driver]string{}
	storetest.Run(t, storetest.Harness{
		NewDB: newDB,
		Open: func(t *testing.T, db string, cfg storetest.Config) (driver.Driver, error) {
			st, err := pgstore.Open(t.Context(), db, pgstore.Options{
				Now: cfg.Now, Location: cfg.Location,
				Unsupported: unsupported(t),
			})
			if err == nil {
				dsns[st] = db
			}
			return st, err
		},
		SetCampaignState: func(ctx context.Context, d driver.Driver, id int64, st campaign.CampaignState, reason string) error {
			n, err := exec(ctx, dsns[d], `UPDATE campaigns SET state = $1, pause_reason = $2 WHERE id = $3`, string(st), reason, id)
			if err == nil && n == 0 {
				err = campaign.ErrNotFound
			}
			return err
		},
		Drain: func(ctx context.Context, d driver.Driver, max int) (campaign.ApplyReport, error) {
			return webhook.Drain(ctx, d, max, webhook.NewRules(webhook.Policy{}))
		},
		Ledger: func(d driver.Driver) storetest.Ledger { return claim.New(d) },
		// The suite's checks are written as the read models' queries are.
		Rebind: readmodel.Postgres.Rebind,
		EndSessions: func(ctx context.Context, d driver.Driver) error {
			_, err := exec(ctx, dsns[d], `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			return err
		},
		Retried: func(d driver.Driver) int64 { return pgstore.Retried(d.(*pgstore.Store)) },
	})
}

// offGoroutine are the suite's sub-tests that meet a method not made yet
// only on goroutines of their own, where t.Skip may not be called: they
// are skipped when they open a database, with the method they need.
var offGoroutine = map[string]string{}

// unsupported is the driver's Unsupported hook for t: skip t, naming the
// method, when on t's goroutine.
func unsupported(t *testing.T) func(string) {
	for prefix, method := range offGoroutine {
		if strings.HasPrefix(t.Name(), prefix) {
			t.Skipf("pgstore: %s: not implemented yet (called from the test's own goroutines)", method)
		}
	}
	g := goroutine()
	return func(method string) {
		if goroutine() != g {
			t.Errorf("pgstore: %s: not implemented yet, met off the test's goroutine: add %s to offGoroutine", method, t.Name())
			return
		}
		t.Skipf("pgstore: %s: not implemented yet", method)
	}
}

// goroutine is the calling goroutine's number, from its stack's header.
func goroutine() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// Opening migrates once: a second open, and two at once, change nothing
// and agree on the zone of quota days the first one fixed.
func TestOpenMigratesOnce(t *testing.T) {
	db := pgtest.Start(t).NewDB(t, "")
	ctx := t.Context()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			st, err := pgstore.Open(ctx, db, pgstore.Options{Location: time.UTC})
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	st, err := pgstore.Open(ctx, db, pgstore.Options{Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var versions int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) < 6 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	if versions != len(files) {
		t.Errorf("%d migrations recorded, want %d (one per file, once)", versions, len(files))
	}
	if st.Location().String() != "UTC" {
		t.Errorf("zone of quota days %s, want the first open's UTC", st.Location())
	}
	var mismatch *campaign.ZoneMismatchError
	if !errors.As(st.QuotaDayOpens(), &mismatch) {
		t.Errorf("QuotaDayOpens = %v, want a zone mismatch (Berlin asked, UTC fixed)", st.QuotaDayOpens())
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:secret@db:5432/wasend", "postgres://u:xxxxx@db:5432/wasend"},
		{"postgres://u@db/wasend?password=secret&sslmode=require", "postgres://u@db/wasend?password=xxxxx&sslmode=require"},
		{"postgres://db/wasend", "postgres://db/wasend"},
	} {
		if got := pgstore.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
