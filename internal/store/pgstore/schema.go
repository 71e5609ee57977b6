package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/wasend/wasend/internal/store/rowscan"
)

// schema is a database's schema as both drivers can describe it: what the
// parity test compares and what the copy walks. Each driver's own
// bookkeeping (schema_migrations, SQLite's sqlite_* tables) is left out.
type schema struct {
	Tables   map[string]*table
	Indexes  map[string]index // explicit (CREATE INDEX) indexes, by name
	Triggers map[string]string
}

// table is one table: its columns in order, its primary key and the
// column sets it keeps unique beside it.
type table struct {
	Name    string
	Columns []column
	Key     []string
	Uniques []string // each a comma-joined column list, sorted
}

// column is one column with the class of the values it holds.
type column struct {
	Name    string
	Class   class
	NotNull bool
}

// class is a column's type as the two drivers can agree on it: SQLite
// types by affinity, Postgres's by family.
type class string

const (
	classInteger class = "integer"
	classReal    class = "real"
	classText    class = "text"
	classBlob    class = "blob"
)

// index is an explicit index: its table, columns, and whether it is
// unique or partial.
type index struct {
	Table   string
	Columns string // comma-joined, in order
	Unique  bool
	Partial bool
}

func (ix index) String() string {
	s := fmt.Sprintf("%s(%s)", ix.Table, ix.Columns)
	if ix.Unique {
		s = "unique " + s
	}
	if ix.Partial {
		s += " partial"
	}
	return s
}

// sqlQuerier is a SQLite handle or a transaction on it.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// skipTable is the drivers' own bookkeeping: never compared, never copied.
func skipTable(name string) bool {
	return name == "schema_migrations" || strings.HasPrefix(name, "sqlite_")
}

// sqliteClass is SQLite's type affinity of a declared type (the rules of
// its "Datatypes" page, section 3.1), numeric counted as real.
func sqliteClass(decl string) class {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return classInteger
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return classText
	case d == "", strings.Contains(d, "BLOB"):
		return classBlob
	default:
		return classReal
	}
}

// pgClass is the class of a Postgres type as format_type names it.
func pgClass(typ string) class {
	switch typ {
	case "bigint", "boolean":
		return classInteger
	case "integer", "smallint":
		// SQLite's integers are 64-bit; a narrower column fails a copy or a
		// scan into int64 only once a value needs it, so parity names it.
		return "integer narrower than bigint"
	case "text", "character varying", "character":
		return classText
	case "bytea":
		return classBlob
	default:
		return classReal
	}
}

// readSQLite describes a SQLite database's schema (the store's Reader).
func readSQLite(ctx context.Context, db sqlQuerier) (schema, error) {
	s := schema{Tables: map[string]*table{}, Indexes: map[string]index{}, Triggers: map[string]string{}}
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name`)
	if err != nil {
		return s, fmt.Errorf("read SQLite's schema: %w", err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, table string
		if err := rows.Scan(&typ, &name, &table); err != nil {
			rows.Close()
			return s, err
		}
		switch {
		case typ == "trigger":
			s.Triggers[name] = table
		case !skipTable(name):
			tables = append(tables, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, err
	}
	for _, name := range tables {
		t, err := sqliteTable(ctx, db, name, s.Indexes)
		if err != nil {
			return s, fmt.Errorf("read SQLite's table %s: %w", name, err)
		}
		s.Tables[name] = t
	}
	return s, nil
}

func sqliteTable(ctx context.Context, db sqlQuerier, name string, indexes map[string]index) (*table, error) {
	t := &table{Name: name}
	rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, err
	}
	key := map[int]string{}
	for rows.Next() {
		var (
			c    column
			decl string
			pk   int
		)
		if err := rows.Scan(&c.Name, &decl, &c.NotNull, &pk); err != nil {
			rows.Close()
			return nil, err
		}
		c.Class = sqliteClass(decl)
		if pk > 0 {
			key[pk] = c.Name
			c.NotNull = true // SQLite lets a non-integer key hold NULL; wasend never writes one
		}
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 1; i <= len(key); i++ {
		t.Key = append(t.Key, key[i])
	}
	type ix struct {
		name, origin    string
		unique, partial bool
	}
	var list []ix
	rows, err = db.QueryContext(ctx, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, name)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var i ix
		if err := rows.Scan(&i.name, &i.unique, &i.origin, &i.partial); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, i)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, i := range list {
		cols, err := sqliteIndexColumns(ctx, db, i.name)
		if err != nil {
			return nil, err
		}
		switch i.origin {
		case "c":
			indexes[i.name] = index{Table: name, Columns: strings.Join(cols, ","), Unique: i.unique, Partial: i.partial}
		case "u":
			t.Uniques = append(t.Uniques, sortedList(cols))
		}
	}
	sort.Strings(t.Uniques)
	return t, nil
}

func sqliteIndexColumns(ctx context.Context, db sqlQuerier, index string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT coalesce(name, '(expression)') FROM pragma_index_info(?) ORDER BY seqno`, index)
	return rowscan.All(rows, err, func(r *sql.Rows, c *string) error { return r.Scan(c) })
}

func sortedList(cols []string) string {
	c := append([]string(nil), cols...)
	sort.Strings(c)
	return strings.Join(c, ",")
}

// readPostgres describes the schema of the current schema (search_path's
// first) of a Postgres database.
func readPostgres(ctx context.Context, q querier) (schema, error) {
	s := schema{Tables: map[string]*table{}, Indexes: map[string]index{}, Triggers: map[string]string{}}
	rows, err := q.Query(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY c.relname, a.attnum`)
	if err != nil {
		return s, fmt.Errorf("read Postgres's schema: %w", err)
	}
	for rows.Next() {
		var tname, typ string
		var c column
		if err := rows.Scan(&tname, &c.Name, &typ, &c.NotNull); err != nil {
			rows.Close()
			return s, err
		}
		if skipTable(tname) {
			continue
		}
		c.Class = pgClass(typ)
		t := s.Tables[tname]
		if t == nil {
			t = &table{Name: tname}
			s.Tables[tname] = t
		}
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("read Postgres's schema: %w", err)
	}
	rows, err = q.Query(ctx, `SELECT i.relname, t.relname, ix.indisunique, ix.indisprimary, ix.indpred IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = ix.indexrelid),
			(SELECT array_agg(coalesce(a.attname, '(expression)') ORDER BY k.ord)
				FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
				LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum)
		FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
		WHERE t.relnamespace = current_schema()::regnamespace ORDER BY i.relname`)
	if err != nil {
		return s, fmt.Errorf("read Postgres's indexes: %w", err)
	}
	for rows.Next() {
		var (
			name, table                            string
			unique, primary, partial, ofConstraint bool
			cols                                   []string
		)
		if err := rows.Scan(&name, &table, &unique, &primary, &partial, &ofConstraint, &cols); err != nil {
			rows.Close()
			return s, err
		}
		t := s.Tables[table]
		if t == nil {
			continue
		}
		switch {
		case primary:
			t.Key = cols
		case ofConstraint && unique:
			t.Uniques = append(t.Uniques, sortedList(cols))
		default:
			s.Indexes[name] = index{Table: table, Columns: strings.Join(cols, ","), Unique: unique, Partial: partial}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("read Postgres's indexes: %w", err)
	}
	for _, t := range s.Tables {
		sort.Strings(t.Uniques)
	}
	rows, err = q.Query(ctx, `SELECT g.tgname, c.relname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
		WHERE NOT g.tgisinternal AND c.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		return s, fmt.Errorf("read Postgres's triggers: %w", err)
	}
	for rows.Next() {
		var name, table string
		if err := rows.Scan(&name, &table); err != nil {
			rows.Close()
			return s, err
		}
		s.Triggers[name] = table
	}
	rows.Close()
	return s, rows.Err()
}

// uniqueIndexes are the column sets table's unique, whole (not partial)
// explicit indexes keep unique: a UNIQUE constraint's equal.
func (s schema) uniqueIndexes(table string) []string {
	var out []string
	for _, ix := range s.Indexes {
		if ix.Table == table && ix.Unique && !ix.Partial {
			out = append(out, sortedList(strings.Split(ix.Columns, ",")))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
