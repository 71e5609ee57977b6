package recordsql

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/store/dialect"
)

// TestPlaceholders: each dialect's statements speak its placeholders only
// (bind rewrites every ?N for Postgres, so a literal ? or a bare ? would
// break it), and SQLite's never say greatest, which it lacks.
func TestPlaceholders(t *testing.T) {
	for _, tt := range []struct {
		d            dialect.Dialect
		want, refuse string
	}{
		{dialect.SQLite, "?", "$"},
		{dialect.Postgres, "$", "?"},
	} {
		q := reflect.ValueOf(byDialect[tt.d])
		for i := range q.NumField() {
			f := q.Type().Field(i)
			if f.Type.Kind() != reflect.String || q.Field(i).String() == "" {
				continue
			}
			s := q.Field(i).String()
			if strings.Contains(s, tt.refuse) {
				t.Errorf("dialect %d, %s: %q holds %q", tt.d, f.Name, s, tt.refuse)
			}
			if tt.d == dialect.SQLite && strings.Contains(s, "greatest(") {
				t.Errorf("dialect %d, %s: %q: SQLite has no greatest", tt.d, f.Name, s)
			}
			for j := 0; j < len(s); j++ {
				if s[j] == tt.want[0] && (j+1 == len(s) || s[j+1] < '1' || s[j+1] > '9') {
					t.Errorf("dialect %d, %s: an unnumbered placeholder in %q", tt.d, f.Name, s)
				}
			}
		}
	}
}
