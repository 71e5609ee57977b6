// Package migrate applies a SQLite database's migrations: SQL files whose
// names start with their number, each once and in one transaction, the
// version recorded in schema_migrations in the same transaction, so that
// two processes opening one database apply each once. Files lists them
// for Postgres's driver too.
package migrate

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options are what a run needs from the store.
type Options struct {
	Lock         sync.Locker      // held while a migration runs: the store's writers' mutex
	Now          func() time.Time // applied_at
	StorageError func(error) error
	// SchemaEdited checks a migration that edited sqlite_schema in place
	// (PRAGMA writable_schema) before it commits.
	SchemaEdited func(context.Context, *sql.Tx) error
}

// Run applies the migrations in fsys's migrations directory that db has
// not seen yet, in the order of the numbers their names start with.
func Run(ctx context.Context, db *sql.DB, fsys fs.FS, o Options) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	files, err := Files(fsys)
	if err != nil {
		return err
	}
	// Every command opens the database: the versions applied are read
	// once, not each in a transaction of its own (a fifth of a short
	// command's instructions went there). apply checks again, in its
	// transaction, any it runs.
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return err
	}
	for _, f := range files {
		if applied[f.Version] {
			continue
		}
		body, err := fs.ReadFile(fsys, f.Path)
		if err != nil {
			return err
		}
		if err := apply(ctx, db, o, f.Version, f.Name, string(body)); err != nil {
			return err
		}
	}
	return nil
}

// appliedVersions returns the versions schema_migrations holds.
func appliedVersions(ctx context.Context, db *sql.DB) (map[int]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// File is one migration file: its version (the number its name starts
// with), its name, and its path in the file system it was listed from.
type File struct {
	Version    int
	Name, Path string
}

// Files lists fsys's migrations (migrations/*.sql) in the order they
// apply, by name (the version, zero-padded, starts it). Both drivers list
// theirs so.
func Files(fsys fs.FS) ([]File, error) {
	paths, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		name := path.Base(p)
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: its name must start with its version number", name)
		}
		files = append(files, File{Version: v, Name: name, Path: p})
	}
	return files, nil
}

// noForeignKeys marks a migration that must run with foreign keys off: one
// that rebuilds a table others refer to (dropping the old table would
// otherwise cascade). Such a migration is checked with foreign_key_check
// before it commits.
const noForeignKeys = "-- wasend:foreign_keys=off\n"

// apply runs one migration unless it ran before, in one transaction.
func apply(ctx context.Context, db *sql.DB, o Options, version int, name, body string) error {
	o.Lock.Lock()
	defer o.Lock.Unlock()
	// foreign_keys can't change inside a transaction: the migration gets a
	// connection of its own, set before the transaction begins and reset
	// before the connection goes back to the pool.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("apply migration %s: %w", name, err)
	}
	defer conn.Close()
	fkOff := strings.HasPrefix(body, noForeignKeys)
	if fkOff {
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return fmt.Errorf("apply migration %s: %w", name, err)
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); err != nil {
				conn.Raw(func(any) error { return sqldriver.ErrBadConn }) // don't pool it without them
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("apply migration %s: %w", name, o.StorageError(err))
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return fmt.Errorf("apply migration %s: %w", name, err)
	}
	if n > 0 {
		return nil // another process applied it first
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return fmt.Errorf("apply migration %s: %w", name, o.StorageError(err))
	}
	if strings.Contains(body, "PRAGMA writable_schema = ON") {
		if err := editSchema(ctx, tx, o.SchemaEdited); err != nil {
			return fmt.Errorf("apply migration %s: %w", name, err)
		}
	}
	if fkOff {
		rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", name, err)
		}
		broken := rows.Next()
		rows.Close()
		if broken {
			return fmt.Errorf("apply migration %s: it would leave rows pointing at nothing (PRAGMA foreign_key_check); nothing was changed", name)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		version, name, o.Now().UnixNano()); err != nil {
		return fmt.Errorf("apply migration %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("apply migration %s: %w", name, o.StorageError(err))
	}
	return nil
}

// editSchema finishes a migration that edited sqlite_schema in place: it
// runs check (the edit matched) and bumps the schema version so that every
// connection, in this process and others, reads the new schema before its
// next statement.
func editSchema(ctx context.Context, tx *sql.Tx, check func(context.Context, *sql.Tx) error) error {
	if check != nil {
		if err := check(ctx, tx); err != nil {
			return err
		}
	}
	var v int64
	if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&v); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA schema_version = %d`, v+1))
	return err
}
