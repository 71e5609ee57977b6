package readmodel

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/wasend/wasend/internal/store/dialect"
)

// Dialect is the SQL a Source's Reader speaks. The read models' queries
// are written once, in SQL that SQLite and Postgres run alike, with
// SQLite's ? and ?N placeholders; the little that cannot be written so is
// a method here, the one place the two engines differ.
type Dialect int

const (
	SQLite   = Dialect(dialect.SQLite)
	Postgres = Dialect(dialect.Postgres)
)

// dialectOf is the dialect of src's Reader: a Source on another database
// than SQLite says which (pgstore's ReaderDialect gives "postgres");
// SQLite's store says nothing.
func dialectOf(src Source) Dialect {
	if d, ok := src.(interface{ ReaderDialect() string }); ok && d.ReaderDialect() == "postgres" {
		return Postgres
	}
	return SQLite
}

// Rebind rewrites a query's ? and ?N placeholders into the dialect's:
// SQLite's as written; Postgres's $N, a bare ? numbered as SQLite numbers
// it (one more than the largest number given so far). Quoted text and
// identifiers are left alone.
func (d Dialect) Rebind(q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	largest := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '\'', '"':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+end+2])
			i += end + 1
		case '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// jsonStrings is a query over one placeholder holding a JSON array of
// strings, giving one row per element in a column named value.
func (d Dialect) jsonStrings() string {
	if d == Postgres {
		return `SELECT json_array_elements_text(CAST(? AS json)) AS value`
	}
	return `SELECT value FROM json_each(?)`
}

// firstBy is, in a grouped query whose only min() or max() is
// min(order), the value of expr in the group's row of that minimum.
// SQLite takes a bare column from that row (as fast as the grouping
// alone); Postgres allows no bare column, so an ordered aggregate keeps
// the first.
func (d Dialect) firstBy(expr, order string) string {
	if d == Postgres {
		return "(array_agg(" + expr + " ORDER BY " + order + "))[1]"
	}
	return expr
}

// handle is the Reader's database: every query goes through the
// dialect's Rebind on its way. It is also a tierrecord.Querier.
type handle struct {
	db *sql.DB
	d  Dialect
}

func (h handle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return h.db.QueryContext(ctx, h.d.Rebind(query), args...)
}

func (h handle) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return h.db.QueryRowContext(ctx, h.d.Rebind(query), args...)
}

// bytewise is expr ordered and compared byte by byte, as SQLite orders
// text (dialect.Bytewise).
func (d Dialect) bytewise(expr string) string {
	return dialect.Dialect(d).Bytewise(expr)
}
