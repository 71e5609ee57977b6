package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// A database made from a template holds the template's tables and rows;
// two tests' databases are apart: a row written in one is not in the other.
func TestNewDBFromTemplate(t *testing.T) {
	s := pgtest.Start(t)
	s.Template(t, "tpl", func(ctx context.Context, dsn string) error {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `CREATE TABLE kv (k text PRIMARY KEY, v int); INSERT INTO kv VALUES ('seed', 1)`)
		return err
	})
	a, b := connect(t, s.NewDB(t, "tpl")), connect(t, s.NewDB(t, "tpl"))
	if _, err := a.Exec(t.Context(), `INSERT INTO kv VALUES ('only-a', 2)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *pgx.Conn
		want int
	}{{"a", a, 2}, {"b", b, 1}} {
		var n int
		if err := tc.c.QueryRow(t.Context(), `SELECT count(*) FROM kv`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("database %s: %d rows, want %d", tc.name, n, tc.want)
		}
	}
}

// An empty database has no tables; its DSN names it, not the template.
func TestNewDBEmpty(t *testing.T) {
	s := pgtest.Start(t)
	c := connect(t, s.NewDB(t, ""))
	var n int
	if err := c.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d tables in a new empty database", n)
	}
}
