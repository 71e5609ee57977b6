// Package store keeps wasend's state in one SQLite file: accounts and their
// limiter state, campaigns, messages, and the runners working on them. It is
// the only package that imports the SQLite driver.
//
// Every write goes through BEGIN IMMEDIATE, so a transaction that reads a
// token bucket holds the write lock before it reads: two processes can never
// both spend the same token. Within one process, writers also queue on a
// mutex so they don't spin in SQLite's busy handler (nor wait in it: lockwait).
package store

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dbfile"
	"github.com/wasend/wasend/internal/slowtrace"
	"github.com/wasend/wasend/internal/store/checkpoint"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/lockwait"
	"github.com/wasend/wasend/internal/store/migrate"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/sqliteconfig"
	"github.com/wasend/wasend/internal/store/writelock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open wasend database.
type Store struct {
	*conn
	quotaZone
	// shared, when set, is where claims ask for admission (ShareLimits).
	shared *driver.SharedLimits
}

var _ driver.Driver = (*Store)(nil)

// conn is the database file and the one connection this process writes
// through: the migrations, the transaction machinery below the Store's
// write and writeSend, and the cache of prepared statements.
type conn struct {
	db   *sql.DB
	path string
	wmu  writelock.Mutex // serialises this process's write transactions; the receiver's go first
	// w is the connection they all run on (see writer); guarded by wmu.
	w *sql.Conn
	// wMem: w keeps temporary files (statement journals) in memory, for
	// the sending path's transactions (see writeSend); guarded by wmu.
	wMem bool
	// stmts caches w's prepared statements by query text (preparing costs
	// more than running most of wasend's queries); guarded by wmu.
	stmts       map[string]*sql.Stmt
	now         func() time.Time
	busyTimeout time.Duration // how long a write waits for another process's lock
	ckpt        *checkpoint.Checkpointer
}

// Open opens (creating if needed, mode 0600) the database at path and applies
// any migrations it has not seen yet.
func Open(ctx context.Context, path string, opts driver.Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = 30 * time.Second
	}
	if err := dbfile.Prepare(path, opts.ExistingDir || opts.MustExist, !opts.MustExist); err != nil {
		return nil, err
	}
	q := url.Values{"_journal_mode": {"WAL"}, "_foreign_keys": {"on"}, "_txlock": {"immediate"},
		// database/sql uses a connection from one goroutine at a time: SQLite's lock on each call is only cost.
		"_mutex": {"no"}}
	q.Set("_busy_timeout", strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10))
	// NORMAL in WAL mode survives a process crash (kill -9); only a power cut
	// may lose the last commits.
	q.Set("_synchronous", "NORMAL")
	q.Set("_cache_size", "-"+strconv.Itoa(cacheKiB))
	db, err := sqliteconfig.Open("file:" + path + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{conn: &conn{db: db, path: path, stmts: map[string]*sql.Stmt{}, now: opts.Now, busyTimeout: opts.BusyTimeout}}
	s.ckpt = checkpoint.Start(db, &s.wmu, 0, nil)
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	for _, ensure := range []func(context.Context, *Store) error{ensureCounts, ensureReachCounts, ensureTierCounts} {
		if err := ensure(ctx, s); err != nil {
			s.Close()
			return nil, fmt.Errorf("database %s: %w", path, s.storageError(err))
		}
	}
	if err := fixZone(ctx, s, opts.Location); err != nil {
		s.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return s, nil
}

// cacheKiB is SQLite's page cache per connection.
const cacheKiB = 16384

// Close closes the database.
func (s *Store) Close() error {
	if s.shared != nil {
		// The gates ShareLimits was given, when they close.
		if c, ok := s.shared.Gates.(io.Closer); ok {
			c.Close()
		}
		s.shared = nil
	}
	s.ckpt.Close()
	s.wmu.Lock()
	if s.w != nil {
		s.closeStmts()
		s.w.Close()
		s.w = nil
	}
	s.wmu.Unlock()
	return s.db.Close()
}

// Now is the store's clock.
func (c *conn) Now() time.Time { return c.now() }

// Reader is the database handle for queries that only read: the read
// models (internal/readmodel) run theirs on it, outside the write lock,
// each statement on one snapshot (WAL). Nothing may write through it:
// writes go through the store's transactions, which hold the lock and keep
// the counts.
func (c *conn) Reader() *sql.DB { return c.db }

// Path returns the database file's path.
func (c *conn) Path() string { return c.path }

// today is the calendar day of t in the store's time zone (callers
// outside ask campaign.QuotaDay with Location).
func (z *quotaZone) today(t time.Time) string { return campaign.QuotaDay(t, z.loc) }

func (c *conn) migrate(ctx context.Context) error {
	return migrate.Run(ctx, c.db, migrations, migrate.Options{Lock: &c.wmu, Now: c.now, StorageError: c.storageError, SchemaEdited: statesAdmitted})
}

// statesAdmitted checks, after a migration edited sqlite_schema in place,
// that messages.state admits every campaign.States value (the edit matched).
func statesAdmitted(ctx context.Context, tx *sql.Tx) error {
	var table string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'messages'`).Scan(&table); err != nil {
		return err
	}
	for _, st := range campaign.States {
		if !strings.Contains(table, "'"+string(st)+"'") {
			return fmt.Errorf("messages.state does not admit %q after the edit; nothing was changed", st)
		}
	}
	return nil
}

// write runs fn in an immediate transaction, run again while another
// process holds the lock (until the busy timeout).
func (s *Store) write(ctx context.Context, fn func(tx *Tx) error) error {
	sp := slowtrace.Start()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return writeIn(ctx, s, false, fn, sp)
}

// writeSend is write for the sending path's transactions (claims and
// outcomes, a few hundred rows each) and the applier's (a bounded batch of
// bodies), with statement journals in memory.
//
// A statement that may fail halfway (a CHECK, a foreign key) journals every
// page it changes so that it can be undone alone, and so does everything
// after RecordWithClaim's savepoint; by default that journal spills to a
// temporary file past 64 KiB, which most claims and records pass: a file
// created, written and truncated in every transaction, the larger part of
// a commit's cost. In memory it is a few hundred KiB at most. A move that
// may touch a whole campaign (expiring its rows, failing a long block of
// suppressed ones) must not hold that in memory: it returns errUnbounded,
// and the transaction runs again as an ordinary write.
func (s *Store) writeSend(ctx context.Context, fn func(tx *Tx) error) error {
	sp := slowtrace.Start()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := writeIn(ctx, s, true, fn, sp)
	if errors.Is(err, errUnbounded) {
		err = writeIn(ctx, s, false, fn, sp)
	}
	return err
}

// errUnbounded is what a sending transaction's unbounded move returns.
var errUnbounded = errors.New("a move without a bound on its rows in a sending transaction")

// writeIn is write, with statement journals in memory when mem is set. The
// caller holds wmu, since sp began (slowtrace: one line a slow write).
func writeIn(ctx context.Context, s *Store, mem bool, fn func(tx *Tx) error, sp slowtrace.Span) error {
	t := writeTrace{locked: sp.Since()}
	err := lockwait.Do(ctx, s.busyTimeout, isBusy, func() error {
		if t.tries++; t.tries > 1 { // a first write waiting goes while another process holds the lock
			s.wmu.Yield()
		}
		return writeOnce(ctx, s, mem, fn, &t)
	})
	sp.End("write", "by", slowtrace.Caller(2), "mutex", t.locked, "tries", t.tries, "body", t.body, "commit", t.commit)
	return s.storageError(err)
}

// writeTrace is a write's parts: the wait for wmu, the tries (more than one:
// another process held the lock), the last try's body and commit.
type writeTrace struct {
	locked, body, commit time.Duration
	tries                int
}

// tempInMemory sets where the writer connection keeps temporary files:
// in memory (mem) or SQLite's default. The setting is taken when a
// transaction begins, so it is made before; only a change costs a
// statement. The caller holds wmu.
func (c *conn) tempInMemory(ctx context.Context, mem bool) error {
	w, err := c.writer(ctx)
	if err != nil || c.wMem == mem {
		return err
	}
	mode := "DEFAULT"
	if mem {
		mode = "MEMORY"
	}
	if _, err := w.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store = `+mode); err != nil {
		c.dropWriter()
		return fmt.Errorf("temp_store: %w", err)
	}
	c.wMem = mem
	return nil
}

// storageError names the database file on errors of the disk itself (full,
// read-only, I/O), which the operator fixes outside wasend.
func (c *conn) storageError(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrCorrupt:
			return fmt.Errorf("database %s: %w: %w", c.path, driver.ErrStorage, err)
		}
	}
	return err
}

func writeOnce(ctx context.Context, s *Store, send bool, fn func(tx *Tx) error, t *writeTrace) error {
	if err := s.tempInMemory(ctx, send); err != nil {
		return err
	}
	// The transaction must not die with ctx: an outcome being recorded while
	// the user presses Ctrl-C has to reach the disk.
	txCtx := context.WithoutCancel(ctx)
	sqlTx, err := s.beginWrite(txCtx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := &Tx{tx: sqlTx, s: s, ctx: txCtx, send: send}
	sp := slowtrace.Start()
	if err := fn(tx); err != nil {
		sqlTx.Rollback()
		return err
	}
	t.body = sp.Since()
	err = sqlTx.Commit()
	if t.commit = sp.Since() - t.body; err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.ckpt.Wrote()
	return nil
}

// beginWrite begins a write transaction on the writer connection. The
// caller holds wmu.
//
// Every write of this process goes through one connection because SQLite
// empties a connection's page cache whenever another connection wrote
// since its last transaction. Claims and records alternating over two
// pooled connections made each of them start cold: a scan of the whole
// cache to empty it, then every page read again from the WAL.
func (c *conn) beginWrite(ctx context.Context) (*sql.Tx, error) {
	w, err := c.writer(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := w.BeginTx(ctx, nil)
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, sqldriver.ErrBadConn) {
		c.dropWriter() // the next write gets a fresh connection
	}
	return tx, err
}

// writer returns the writer connection. The caller holds wmu.
func (c *conn) writer(ctx context.Context) (*sql.Conn, error) {
	if c.w == nil {
		w, err := c.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		// lockwait waits (writeIn); the checkpoints are the checkpointer's.
		if _, err := w.ExecContext(ctx, `PRAGMA busy_timeout = 0; `+checkpoint.WriterPragma); err != nil {
			return nil, errors.Join(err, w.Close())
		}
		c.w, c.wMem = w, false
	}
	return c.w, nil
}

// dropWriter discards the writer connection. The caller holds wmu.
func (c *conn) dropWriter() {
	if c.w != nil {
		c.closeStmts()
		c.w.Raw(func(any) error { return sqldriver.ErrBadConn }) // not back into the pool
		c.w.Close()
		c.w = nil
	}
}

// Tx is a write transaction whose queries run as cached prepared statements.
type Tx struct {
	tx *sql.Tx
	s  *Store
	// ctx is what every statement runs with, whatever context its caller
	// passes: the transaction's, which ctx's cancellation does not reach.
	// A statement cut short would roll back outcomes that must reach the
	// disk, and the driver runs a statement under a cancellable context
	// on a goroutine of its own, a thread handoff per statement.
	ctx context.Context
	// send: a sending transaction (writeSend), whose moves must be
	// bounded; one that is not returns errUnbounded.
	send bool
}

// stmt is query prepared on the writer, which runs it inside the
// transaction the writer holds open: not prepared on the pool and then
// into each transaction (Tx.StmtContext), which prepared each text twice
// and made a new *sql.Stmt at every run (4 allocations a message).
func (t *Tx) stmt(_ context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.s.stmts[query]; ok {
		return st, nil
	}
	st, err := t.s.w.PrepareContext(t.ctx, query)
	if err != nil {
		return nil, err
	}
	t.s.stmts[query] = st
	return st, nil
}

// closeStmts closes the writer's prepared statements. The caller holds wmu.
func (c *conn) closeStmts() {
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
}

// ExecContext runs a statement in the transaction.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.ctx, args...)
}

// QueryContext runs a query in the transaction.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(t.ctx, args...)
}

// QueryRowContext runs a one-row query in the transaction.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		// Surface the prepare error through Scan, as database/sql does.
		return t.tx.QueryRowContext(t.ctx, query, args...)
	}
	return st.QueryRowContext(t.ctx, args...)
}

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}

// The instants the store keeps as Unix nanoseconds, 0 or NULL for none.
var (
	nanos     = rowscan.Nanos
	fromNanos = rowscan.FromNanos
)
