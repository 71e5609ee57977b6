package claimsql

import (
	"reflect"
	"testing"

	"github.com/wasend/wasend/internal/store/dialect"
)

func TestIn(t *testing.T) {
	for _, tt := range []struct {
		name     string
		d        dialect.Dialect
		first    int
		vals     []int64
		pad      any
		want     string
		wantArgs []any
	}{
		{"sqlite lists", dialect.SQLite, 1, []int64{7, 9}, nil, "id IN (?1, ?2)", []any{int64(7), int64(9)}},
		{"sqlite numbers from first", dialect.SQLite, 3, []int64{7}, nil, "id IN (?3)", []any{int64(7)}},
		{"sqlite pads", dialect.SQLite, 1, []int64{7}, int64(0), "id IN (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
			[]any{int64(7), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0)}},
		{"postgres passes an array", dialect.Postgres, 2, []int64{7, 9}, int64(0), "id = ANY(?2)", []any{[]int64{7, 9}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, args := in(tt.d, "id", tt.first, tt.vals, tt.pad)
			if got != tt.want || !reflect.DeepEqual(args, tt.wantArgs) {
				t.Errorf("in = %q %v, want %q %v", got, args, tt.want, tt.wantArgs)
			}
		})
	}
}

func TestPadded(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{0, 8}, {1, 8}, {8, 8}, {9, 32}, {32, 32}, {33, 64}, {256, 256}} {
		if got := Padded(tt.n); got != tt.want {
			t.Errorf("Padded(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestBind(t *testing.T) {
	const q = `SELECT a FROM t WHERE a = ?1 AND b = ANY(?12)`
	for _, tt := range []struct {
		d    dialect.Dialect
		want string
	}{
		{dialect.SQLite, q},
		{dialect.Postgres, `SELECT a FROM t WHERE a = $1 AND b = ANY($12)`},
		{dialect.Postgres, `SELECT a FROM t WHERE a = $1 AND b = ANY($12)`}, // again, as kept
	} {
		if got := New(nil, tt.d).bind(q); got != tt.want {
			t.Errorf("dialect %d: bind = %q, want %q", tt.d, got, tt.want)
		}
	}
}
