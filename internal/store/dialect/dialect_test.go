package dialect

import "testing"

func TestSpellings(t *testing.T) {
	const q = `SELECT a FROM t WHERE a = ?1 AND b = ANY(?12)`
	for _, tt := range []struct {
		d                  Dialect
		bind, greatestWant string
		bytewise           string
	}{
		{SQLite, q, "max(a, ?1)", "name"},
		{Postgres, `SELECT a FROM t WHERE a = $1 AND b = ANY($12)`, "greatest(a, ?1)", `name COLLATE "C"`},
	} {
		if got := tt.d.Bytewise("name"); got != tt.bytewise {
			t.Errorf("dialect %d: Bytewise = %q, want %q", tt.d, got, tt.bytewise)
		}
		if got := tt.d.Bind(q); got != tt.bind {
			t.Errorf("dialect %d: Bind = %q, want %q", tt.d, got, tt.bind)
		}
		if got := tt.d.Greatest("a", "?1"); got != tt.greatestWant {
			t.Errorf("dialect %d: Greatest = %q, want %q", tt.d, got, tt.greatestWant)
		}
	}
}

func TestBothIndexesByDialect(t *testing.T) {
	got := Both(func(d Dialect) string { return d.Bind("?1") })
	if got[SQLite] != "?1" || got[Postgres] != "$1" {
		t.Errorf("Both = %q, want SQLite's ?1 at SQLite and Postgres's $1 at Postgres", got)
	}
}
