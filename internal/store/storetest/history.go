package storetest

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/store/driver"
)

// Twins are one store on SQLite and one on Postgres that a test writes
// behind the stores' backs (each driver's Reader, the database itself)
// with SQL both run as written — what wasend's own moves would write — to
// hold the Postgres twin of a SQLite trigger to it: after each step the
// kept tables read the same on both.
type Twins struct{ Lite, PG driver.Driver }

// Each calls f with each store and its driver's name.
func (w Twins) Each(f func(name string, d driver.Driver)) {
	f("SQLite", w.Lite)
	f("Postgres", w.PG)
}

// Exec runs q on both stores, failing t, with the driver and what, on an
// error.
func (w Twins) Exec(t *testing.T, what string, q string) {
	t.Helper()
	w.Each(func(name string, d driver.Driver) {
		if _, err := d.Reader().ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s, %s: %v\n%s", name, what, err, q)
		}
	})
}

// Play runs a history on both stores, step by step (a step is a few
// statements), calling after once both ran step i.
func (w Twins) Play(t *testing.T, history [][]string, after func(i int, step []string)) {
	t.Helper()
	for i, step := range history {
		for _, q := range step {
			w.Exec(t, fmt.Sprint("step ", i), q)
		}
		after(i, step)
	}
}

// Text reads q on d, a line a row, its values as fmt prints them: the
// same text on both drivers for the same integers, text and NULLs.
func Text(t *testing.T, d driver.Driver, q string) string {
	t.Helper()
	rows, err := d.Reader().QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rows.Next() {
		vals, err := scanAny(rows, len(cols))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// scanAny scans rows' current row of n columns into their values, text
// read as bytes made a string.
func scanAny(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, v := range vals {
		if s, ok := v.([]byte); ok {
			vals[i] = string(s)
		}
	}
	return vals, nil
}
