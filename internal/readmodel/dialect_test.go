package readmodel_test

import (
	"testing"

	"github.com/wasend/wasend/internal/readmodel"
)

// Rebind numbers placeholders as SQLite does (a bare ? is one more than
// the largest number so far), leaves quoted text and identifiers alone,
// and leaves SQLite's queries as written.
func TestRebind(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`WHERE a = ? AND b = ?`, `WHERE a = $1 AND b = $2`},
		{`WHERE a = ?1 OR (?1 = 0 AND b = ?2)`, `WHERE a = $1 OR ($1 = 0 AND b = $2)`},
		{`WHERE a = ?2 AND b = ? AND c = ?1`, `WHERE a = $2 AND b = $3 AND c = $1`},
		{`WHERE a IN (?, ?, ?) LIMIT ?`, `WHERE a IN ($1, $2, $3) LIMIT $4`},
		{`WHERE a = '?' AND b = ?`, `WHERE a = '?' AND b = $1`},
		{`WHERE a = 'it''s ?' AND "col?" = ?`, `WHERE a = 'it''s ?' AND "col?" = $1`},
		{`WHERE a = 'unclosed ?`, `WHERE a = 'unclosed ?`},
		{`WHERE a = ?10`, `WHERE a = $10`},
	} {
		if got := readmodel.Postgres.Rebind(tt.in); got != tt.want {
			t.Errorf("Postgres.Rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := readmodel.SQLite.Rebind(tt.in); got != tt.in {
			t.Errorf("SQLite.Rebind(%q) = %q, want it as written", tt.in, got)
		}
	}
}
