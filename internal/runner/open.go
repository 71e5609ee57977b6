package runner

import (
	"context"

	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// OpenStore opens the database db names through the driver it needs: a
// postgres:// (or postgresql://) URL opens the store on Postgres, anything
// else is a SQLite file's path. opts are SQLite's; a Postgres database
// takes Now and Location from them (it is created by its server, never by
// wasend, so ExistingDir and MustExist do not apply). No error names the
// URL's password.
func OpenStore(ctx context.Context, db string, opts driver.Options) (driver.Driver, error) {
	if IsPostgres(db) {
		st, err := pgstore.Open(ctx, db, pgstore.Options{Now: opts.Now, Location: opts.Location})
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := store.Open(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// IsPostgres says whether a --db value names a Postgres database rather
// than a SQLite file.
func IsPostgres(db string) bool { return pgstore.IsURL(db) }

// RedactDB is a --db value fit to print: a Postgres URL without its
// password, a file's path as it is.
func RedactDB(db string) string {
	if IsPostgres(db) {
		return pgstore.Redact(db)
	}
	return db
}
