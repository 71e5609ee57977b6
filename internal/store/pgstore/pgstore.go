// Package pgstore is the store on Postgres (issue 30): a driver.Driver over
// a pgx pool, with its own embedded migrations, for many hosts working on
// one shared database, proven by the conformance suite (storetest) as
// SQLite's driver is: every method is made. Where the suite still skips,
// it is on Reader (the read models' SQL, see Reader).
package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configure Open, as driver.Options do SQLite's.
type Options struct {
	// Now is the clock for timestamps the driver writes itself.
	Now func() time.Time
	// Location is the zone of quota days asked for (WASEND_TZ); nil asks
	// for none. The database keeps the first one it is opened with.
	Location *time.Location
	// Unsupported, when set, is told the name of a method not implemented
	// yet before it returns its error: the conformance suite skips there.
	Unsupported func(method string)
}

// Store is the store on Postgres.
type Store struct {
	pool   *pgxpool.Pool
	reader *sql.DB
	addr   string
	now    func() time.Time
	hook   func(string)

	loc     *time.Location
	zoneErr *campaign.ZoneMismatchError

	// shared is set by ShareLimits: claims ask its gates.
	shared *driver.SharedLimits

	// retried counts the transactions Postgres aborted for a deadlock or
	// a serialization failure (inTx runs them again), for the tests.
	retried atomic.Int64
}

var _ driver.Driver = (*Store)(nil)

// IsURL says whether a --db value names a Postgres database rather than a
// SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open connects to the database at dsn (a postgres:// URL) and applies the
// migrations it has not seen yet; processes opening one database at once
// apply them once (an advisory lock).
func Open(ctx context.Context, dsn string, o Options) (*Store, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, fmt.Errorf("database %s: not a Postgres URL", Redact(dsn))
	}
	// A host stopped (SIGSTOP, a frozen VM) inside a transaction holds the
	// sending transactions' advisory lock: every other host would wait for
	// it. Postgres ends such a session, and with it the lock, after a
	// while well inside a lease (the URL may set another value).
	if _, set := cfg.ConnConfig.RuntimeParams[idleTimeoutParam]; !set {
		cfg.ConnConfig.RuntimeParams[idleTimeoutParam] = idleInTransaction
	}
	// A session the server ended (that timeout, pg_terminate_backend, a
	// restart) leaves its connection in the pool, dead: its next use would
	// fail the caller's statement. A ping on acquiring finds it, and the
	// pool takes another.
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", Redact(dsn), err)
	}
	s := &Store{pool: pool, addr: Redact(dsn), now: o.Now, hook: o.Unsupported}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", s.addr, err)
	}
	if err := s.fixZone(ctx, o.Location); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", s.addr, err)
	}
	s.reader = stdlib.OpenDBFromPool(pool)
	return s, nil
}

// idleInTransaction is how long a session may sit idle inside a
// transaction before Postgres ends it (idleTimeoutParam).
const (
	idleTimeoutParam  = "idle_in_transaction_session_timeout"
	idleInTransaction = "10s"
)

// Redact is dsn without its password, for messages and status.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a Postgres URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// migrationLock is the advisory lock key taken while migrating.
const migrationLock = 0x7761_7365_6e64 // "wasend"

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("lock for migrations: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	files, err := migrate.Files(migrations)
	if err != nil {
		return err
	}
	for _, f := range files {
		v, name := f.Version, f.Name
		var seen bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, v).Scan(&seen); err != nil {
			return err
		}
		if seen {
			continue
		}
		body, err := migrations.ReadFile(f.Path)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				v, name, s.now().UnixNano())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

// zoneKey is the setting that holds the zone of quota days (SQLite's too).
const zoneKey = "timezone"

func (s *Store) setting(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, key string) (string, error) {
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, nil
}

// fixZone reads the zone of quota days, storing the one asked for (or the
// local zone's name) when the database has none yet; the first process
// wins a race and every one reads its zone back.
func (s *Store) fixZone(ctx context.Context, requested *time.Location) error {
	want := campaign.LocalZoneName()
	if requested != nil {
		want = requested.String()
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
		zoneKey, want); err != nil {
		return fmt.Errorf("fix the zone of quota days: %w", err)
	}
	stored, err := s.setting(ctx, s.pool, zoneKey)
	if err != nil {
		return err
	}
	s.loc, s.zoneErr, err = campaign.QuotaZone(stored, requested)
	return err
}

// Close releases the pool; nothing may be called after it.
func (s *Store) Close() error {
	if s.reader != nil {
		s.reader.Close()
	}
	s.pool.Close()
	return nil
}

// Now is the driver's clock.
func (s *Store) Now() time.Time { return s.now() }

// Location is the zone of quota days fixed in the database.
func (s *Store) Location() *time.Location { return s.loc }

// Today is t's calendar day in the zone of quota days.
func (s *Store) Today(t time.Time) string { return campaign.QuotaDay(t, s.loc) }

// QuotaDayOpens is nil when quota days may open here, or the zone
// mismatch that keeps every one shut.
func (s *Store) QuotaDayOpens() error {
	if s.zoneErr != nil {
		return s.zoneErr
	}
	return nil
}

// Path is the database's URL without its password.
func (s *Store) Path() string { return s.addr }

// SetTimezone changes the zone of quota days and returns the old one.
func (s *Store) SetTimezone(ctx context.Context, name string) (old string, err error) {
	loc, err := campaign.LoadQuotaZone(name)
	if err != nil {
		return "", err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if old, err = s.setting(ctx, tx, zoneKey); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, zoneKey, name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("set the zone of quota days: %w", err)
	}
	s.loc, s.zoneErr = loc, nil
	return old, nil
}
