package pgstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CopyOptions configure CopyFromSQLite.
type CopyOptions struct {
	// Now dates the migrations the target is brought up to.
	Now func() time.Time
}

// TableCopy is one table's rows in the SQLite file and in Postgres once
// copied.
type TableCopy struct {
	Table  string `json:"table"`
	Source int64  `json:"source"`
	Copied int64  `json:"copied"`
}

// CopyReport is what CopyFromSQLite found and did, table by table in
// name order.
type CopyReport struct {
	Tables []TableCopy
	// AlreadyCopied: Postgres held this very copy already (every table's
	// rows the same as the file's); nothing was written.
	AlreadyCopied bool
}

// Matches says whether every table has as many rows in Postgres as in the
// file.
func (r CopyReport) Matches() bool {
	for _, t := range r.Tables {
		if t.Source != t.Copied {
			return false
		}
	}
	return len(r.Tables) > 0
}

// ErrTargetHoldsData is the refusal to copy into a Postgres database that
// holds rows which are not this file's copy: a copy never merges.
var ErrTargetHoldsData = errors.New("the Postgres database already holds data that is not this file's copy; store migrate copies into an empty database only")

// ErrCopyDiffers is a copy that did not come out equal to its source: its
// transaction is rolled back, Postgres keeps nothing of it.
var ErrCopyDiffers = errors.New("the copy differs from the file; nothing was kept")

// copyLock is the advisory lock a copy holds for its transaction: two
// copies into one database run one after the other, and the second finds
// the first's.
const copyLock = migrationLock + 1

// seeded are the tables a new database has rows in before anyone uses it:
// migrations write the tiers and the global limit, and opening it stores
// the zone of quota days. A copy replaces them with the file's.
var seeded = map[string]bool{"tiers": true, "global_limit": true, "settings": true}

// CopyFromSQLite copies every table of a SQLite store (src, the store's
// handle) into the Postgres database at dsn, migrated to the latest schema
// first: one Postgres transaction, COPY per table, ids kept, identity
// sequences set past them, kept counts copied as they are (triggers are
// off while rows go in). Every table is then read back and compared with
// the file, count and content; a difference rolls everything back
// (ErrCopyDiffers). A database that already holds this copy is left as
// it is (AlreadyCopied); one that holds anything else is refused
// (ErrTargetHoldsData). The file is read in one transaction, which holds
// its write lock: senders on it wait until the copy ends.
//
// dsn may hold a password: no error names it.
func CopyFromSQLite(ctx context.Context, src *sql.DB, dsn string, o CopyOptions) (CopyReport, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return CopyReport{}, errors.New("the Postgres database: not a Postgres URL (postgres://user:password@host:5432/name)")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return CopyReport{}, fmt.Errorf("the Postgres database: %w", err)
	}
	defer pool.Close()
	target := &Store{pool: pool, now: o.Now}
	if err := target.migrate(ctx); err != nil {
		return CopyReport{}, fmt.Errorf("the Postgres database: %w", err)
	}
	stx, err := src.BeginTx(ctx, nil)
	if err != nil {
		return CopyReport{}, fmt.Errorf("read the SQLite file (is a sender running on it?): %w", err)
	}
	defer stx.Rollback()
	var rep CopyReport
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		c := &copier{src: stx, dst: tx, seed: maphash.MakeSeed()}
		rep, err = c.run(ctx)
		return err
	})
	sort.Slice(rep.Tables, func(i, j int) bool { return rep.Tables[i].Table < rep.Tables[j].Table })
	return rep, err
}

// copier is one copy: the file's read transaction and Postgres's.
type copier struct {
	src    *sql.Tx
	dst    pgx.Tx
	seed   maphash.Seed
	tables []*table // the file's, in the order they are copied
}

func (c *copier) run(ctx context.Context) (CopyReport, error) {
	if _, err := c.dst.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, copyLock); err != nil {
		return CopyReport{}, fmt.Errorf("lock the Postgres database for the copy: %w", err)
	}
	if err := c.plan(ctx); err != nil {
		return CopyReport{}, err
	}
	var rep CopyReport
	fresh := true
	for _, t := range c.tables {
		n, err := c.count(ctx, t)
		if err != nil {
			return rep, err
		}
		rep.Tables = append(rep.Tables, TableCopy{Table: t.Name, Source: n[0], Copied: n[1]})
		if n[1] > 0 && !seeded[t.Name] {
			fresh = false
		}
	}
	var zoneOnly bool
	if err := c.dst.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM settings WHERE key <> $1)`, zoneKey).Scan(&zoneOnly); err != nil {
		return rep, fmt.Errorf("read Postgres's settings: %w", err)
	}
	// Only equal counts can be this copy: then the rows are compared.
	var diff string
	compared := false
	if rep.Matches() {
		var err error
		if diff, err = c.differences(ctx); err != nil {
			return rep, err
		}
		if diff == "" {
			rep.AlreadyCopied = true
			return rep, nil
		}
		compared = true
	}
	if !fresh || !zoneOnly {
		if !compared {
			var err error
			if diff, err = c.differences(ctx); err != nil {
				return rep, err
			}
		}
		return rep, fmt.Errorf("%w (%s)", ErrTargetHoldsData, diff)
	}
	if err := c.copyAll(ctx, rep.Tables); err != nil {
		return rep, err
	}
	for i, t := range c.tables {
		n, err := c.count(ctx, t)
		if err != nil {
			return rep, err
		}
		rep.Tables[i].Copied = n[1]
	}
	if !rep.Matches() {
		return rep, ErrCopyDiffers
	}
	diff, err := c.differences(ctx)
	if err != nil {
		return rep, err
	}
	if diff != "" {
		return rep, fmt.Errorf("%w (%s)", ErrCopyDiffers, diff)
	}
	return rep, nil
}

// plan reads both schemas, checks that every column of the file has its
// place in Postgres, and orders the tables so that each comes after the
// tables it refers to.
func (c *copier) plan(ctx context.Context) error {
	from, err := readSQLite(ctx, c.src)
	if err != nil {
		return err
	}
	to, err := readPostgres(ctx, c.dst)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(from.Tables) {
		t, pt := from.Tables[name], to.Tables[name]
		if pt == nil {
			return fmt.Errorf("table %s of the SQLite file has no place in Postgres: copy with the wasend version that wrote the file", name)
		}
		cols := columnsOf(pt)
		for i, col := range t.Columns {
			pc, ok := cols[col.Name]
			if !ok {
				return fmt.Errorf("column %s.%s of the SQLite file has no place in Postgres: copy with the wasend version that wrote the file", name, col.Name)
			}
			t.Columns[i].Class = pc.Class // what the value becomes
		}
	}
	refs, err := c.references(ctx)
	if err != nil {
		return err
	}
	order, err := referencesFirst(sortedKeys(from.Tables), refs)
	if err != nil {
		return err
	}
	for _, name := range order {
		c.tables = append(c.tables, from.Tables[name])
	}
	return nil
}

func columnsOf(t *table) map[string]column {
	m := map[string]column{}
	for _, col := range t.Columns {
		m[col.Name] = col
	}
	return m
}

// references are Postgres's foreign keys: table → the tables it refers to.
func (c *copier) references(ctx context.Context) (map[string][]string, error) {
	rows, err := c.dst.Query(ctx, `SELECT f.relname, t.relname FROM pg_constraint k
		JOIN pg_class f ON f.oid = k.conrelid JOIN pg_class t ON t.oid = k.confrelid
		WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, fmt.Errorf("read Postgres's foreign keys: %w", err)
	}
	defer rows.Close()
	refs := map[string][]string{}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			return nil, err
		}
		if from != to {
			refs[from] = append(refs[from], to)
		}
	}
	return refs, rows.Err()
}

// referencesFirst orders tables so that each comes after those it refers
// to, by name where the references leave a choice.
func referencesFirst(tables []string, refs map[string][]string) ([]string, error) {
	done := map[string]bool{}
	var order []string
	for len(order) < len(tables) {
		progress := false
		for _, t := range tables {
			if done[t] {
				continue
			}
			ready := true
			for _, r := range refs[t] {
				if !done[r] && contains(tables, r) {
					ready = false
				}
			}
			if ready {
				done[t] = true
				order = append(order, t)
				progress = true
			}
		}
		if !progress {
			return nil, errors.New("Postgres's tables refer to each other in a cycle: no order copies them")
		}
	}
	return order, nil
}

// count is t's rows in the file and in Postgres.
func (c *copier) count(ctx context.Context, t *table) ([2]int64, error) {
	var n [2]int64
	if err := c.src.QueryRowContext(ctx, `SELECT count(*) FROM `+sqliteName(t.Name)).Scan(&n[0]); err != nil {
		return n, fmt.Errorf("count %s in the SQLite file: %w", t.Name, err)
	}
	if err := c.dst.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t.Name}.Sanitize()).Scan(&n[1]); err != nil {
		return n, fmt.Errorf("count %s in Postgres: %w", t.Name, err)
	}
	return n, nil
}

// copyAll replaces what a new database holds with the file's rows. Its
// triggers are off meanwhile (in this transaction only): the kept counts
// come from the file as they are, and counting the rows again as they
// arrive would double them.
func (c *copier) copyAll(ctx context.Context, counts []TableCopy) error {
	for _, t := range c.tables {
		if _, err := c.dst.Exec(ctx, `ALTER TABLE `+pgx.Identifier{t.Name}.Sanitize()+` DISABLE TRIGGER USER`); err != nil {
			return fmt.Errorf("turn off %s's triggers for the copy (the tables' owner must copy): %w", t.Name, err)
		}
	}
	for i := len(c.tables) - 1; i >= 0; i-- {
		if _, err := c.dst.Exec(ctx, `DELETE FROM `+pgx.Identifier{c.tables[i].Name}.Sanitize()); err != nil {
			return fmt.Errorf("clear %s: %w", c.tables[i].Name, err)
		}
	}
	for i, t := range c.tables {
		if counts[i].Source == 0 {
			continue
		}
		next, done, err := c.sourceRows(ctx, t)
		if err != nil {
			return err
		}
		_, err = c.dst.CopyFrom(ctx, pgx.Identifier{t.Name}, names(t), pgx.CopyFromFunc(next))
		done()
		if err != nil {
			return fmt.Errorf("copy %s: %w", t.Name, err)
		}
	}
	if err := c.setSequences(ctx); err != nil {
		return err
	}
	for _, t := range c.tables {
		if _, err := c.dst.Exec(ctx, `ALTER TABLE `+pgx.Identifier{t.Name}.Sanitize()+` ENABLE TRIGGER USER`); err != nil {
			return fmt.Errorf("turn %s's triggers back on: %w", t.Name, err)
		}
	}
	return nil
}

func names(t *table) []string {
	out := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		out[i] = col.Name
	}
	return out
}

func sqliteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sourceRows streams t's rows from the file, each value made the class
// its Postgres column holds; done closes the read.
func (c *copier) sourceRows(ctx context.Context, t *table) (next func() ([]any, error), done func(), err error) {
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = sqliteName(col.Name)
	}
	rows, err := c.src.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+sqliteName(t.Name))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s from the SQLite file: %w", t.Name, err)
	}
	line := 0
	next = func() ([]any, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read %s from the SQLite file: %w", t.Name, err)
			}
			return nil, nil
		}
		line++
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s from the SQLite file: %w", t.Name, err)
		}
		for i, col := range t.Columns {
			v, err := asClass(vals[i], col.Class)
			if err != nil {
				return nil, fmt.Errorf("table %s, row %d, column %s: %w", t.Name, line, col.Name, err)
			}
			vals[i] = v
		}
		return vals, nil
	}
	return next, func() { rows.Close() }, nil
}

// asClass is a SQLite value (whatever its column's affinity let it be) as
// the Go value pgx writes into a column of class c.
func asClass(v any, c class) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c {
	case classInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		}
	case classReal:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, nil
			}
		}
	case classText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			if utf8.Valid(x) {
				return string(x), nil
			}
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	case classBlob:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	}
	return nil, fmt.Errorf("%v (%T) does not fit a column of class %s", v, v, c)
}

// setSequences moves each identity column's sequence past the ids copied
// and past the file's own high-water mark (sqlite_sequence), so that a
// new row never takes an id the file ever gave.
func (c *copier) setSequences(ctx context.Context) error {
	marks := map[string]int64{}
	var hasSeq int
	if err := c.src.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'`).Scan(&hasSeq); err != nil {
		return fmt.Errorf("read the SQLite file's sequences: %w", err)
	}
	if hasSeq > 0 {
		rows, err := c.src.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`)
		if err != nil {
			return fmt.Errorf("read the SQLite file's sequences: %w", err)
		}
		for rows.Next() {
			var name string
			var seq int64
			if err := rows.Scan(&name, &seq); err != nil {
				rows.Close()
				return err
			}
			marks[name] = seq
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	rows, err := c.dst.Query(ctx, `SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE a.attidentity <> '' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("read Postgres's identity columns: %w", err)
	}
	type ident struct{ table, column string }
	var ids []ident
	for rows.Next() {
		var i ident
		if err := rows.Scan(&i.table, &i.column); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, i)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, i := range ids {
		tbl, col := pgx.Identifier{i.table}.Sanitize(), pgx.Identifier{i.column}.Sanitize()
		if _, err := c.dst.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), greatest(max(`+col+`), $3::bigint), true)
			FROM `+tbl+` HAVING greatest(max(`+col+`), $3::bigint) >= 1`, tbl, i.column, marks[i.table]); err != nil {
			return fmt.Errorf("set %s's sequence: %w", i.table, err)
		}
	}
	return nil
}

// digest is a table's rows as one value that does not depend on their
// order: the count, and the sum of the rows' hashes.
type digest struct {
	n   int64
	sum uint64
}

func (c *copier) rowHash(vals []any) (uint64, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var b [9]byte
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			h.WriteByte(0)
		case int64:
			b[0] = 1
			binary.LittleEndian.PutUint64(b[1:], uint64(x))
			h.Write(b[:])
		case float64:
			b[0] = 2
			binary.LittleEndian.PutUint64(b[1:], math.Float64bits(x))
			h.Write(b[:])
		case string:
			b[0] = 3
			binary.LittleEndian.PutUint64(b[1:], uint64(len(x)))
			h.Write(b[:])
			h.WriteString(x)
		case []byte:
			b[0] = 4
			binary.LittleEndian.PutUint64(b[1:], uint64(len(x)))
			h.Write(b[:])
			h.Write(x)
		default:
			return 0, fmt.Errorf("a value of type %T", v)
		}
	}
	return h.Sum64(), nil
}

// differences compares every table of the file with Postgres's, by count
// and content, and names those that differ ("" when none).
func (c *copier) differences(ctx context.Context) (string, error) {
	var diffs []string
	for _, t := range c.tables {
		var src, dst digest
		next, done, err := c.sourceRows(ctx, t)
		if err != nil {
			return "", err
		}
		for {
			vals, err := next()
			if err == nil && vals != nil {
				var h uint64
				h, err = c.rowHash(vals)
				src.n, src.sum = src.n+1, src.sum+h
			}
			if err != nil {
				done()
				return "", fmt.Errorf("compare %s: %w", t.Name, err)
			}
			if vals == nil {
				break
			}
		}
		done()
		rows, err := c.dst.Query(ctx, `SELECT `+strings.Join(quoted(names(t)), ", ")+` FROM `+pgx.Identifier{t.Name}.Sanitize())
		if err != nil {
			return "", fmt.Errorf("read %s from Postgres: %w", t.Name, err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			var h uint64
			if err == nil {
				h, err = c.rowHash(vals)
			}
			if err != nil {
				rows.Close()
				return "", fmt.Errorf("read %s from Postgres: %w", t.Name, err)
			}
			dst.n, dst.sum = dst.n+1, dst.sum+h
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("read %s from Postgres: %w", t.Name, err)
		}
		switch {
		case src.n != dst.n:
			diffs = append(diffs, fmt.Sprintf("table %s: %d rows in the file, %d in Postgres", t.Name, src.n, dst.n))
		case src.sum != dst.sum:
			diffs = append(diffs, fmt.Sprintf("table %s: %d rows in both, not the same rows", t.Name, src.n))
		}
	}
	if len(diffs) > 4 {
		diffs = append(diffs[:4], fmt.Sprintf("%d more tables", len(diffs)-4))
	}
	return strings.Join(diffs, "; "), nil
}

func quoted(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = pgx.Identifier{c}.Sanitize()
	}
	return out
}
