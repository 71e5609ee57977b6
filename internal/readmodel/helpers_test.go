package readmodel_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The tests build state through the store's public API and read it back
// through a Reader over the same database, on each driver.

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	t0           = storetest.T0
	newFakeClock = storetest.NewClock
)

func at(d time.Duration) time.Time { return t0.Add(d) }

// backend is a driver of the store the read models' tests run on.
type backend struct {
	name    string
	dialect readmodel.Dialect
	// open opens a fresh database on clk, quota days in UTC; the test's
	// cleanup closes it.
	open func(t *testing.T, clk *clock.Sim) driver.Driver
}

// backends are SQLite and Postgres; Postgres's tests skip, saying why,
// where no postgres is installed, and where they meet a method pgstore
// has not made yet.
var backends = []backend{
	{"sqlite", readmodel.SQLite, func(t *testing.T, clk *clock.Sim) driver.Driver { return storetest.OpenTest(t, clk) }},
	{"postgres", readmodel.Postgres, openPostgres},
}

// eachBackend runs test once per backend, as a sub-test named after it.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// template is the migrated database each Postgres test's database copies.
const template = "wasend_readmodel"

func openPostgres(t *testing.T, clk *clock.Sim) driver.Driver {
	t.Helper()
	srv := pgtest.Start(t)
	srv.Template(t, template, func(ctx context.Context, dsn string) error {
		st, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
		if err != nil {
			return err
		}
		return st.Close()
	})
	st, err := pgstore.Open(t.Context(), srv.NewDB(t, template), pgstore.Options{
		Now: clk.Now, Location: time.UTC,
		Unsupported: func(method string) { t.Skipf("pgstore: %s: not implemented yet", method) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// exec runs one statement on st's database behind the store's back (a
// test's shortcut, never the read models'), written with ? placeholders.
func (b backend) exec(t *testing.T, st driver.Driver, query string, args ...any) {
	t.Helper()
	if _, err := st.Reader().ExecContext(t.Context(), b.dialect.Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
