package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
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

// The settings a run keeps with its campaign that driver.Driver does not
// name yet, so the store on Postgres does not have them (SQLite's
// *store.Store does): a run asks for them here and says plainly what it
// cannot keep without them.
type (
	sendingKeeper interface {
		SetSending(ctx context.Context, id int64, maxHeld int, ttl time.Duration) (time.Duration, error)
	}
	budgetKeeper interface {
		SetBudget(ctx context.Context, id int64, max pricing.Micros, currency string, price func(phone string) pricing.Micros) error
	}
)

// setSending keeps --max-held and --ttl with the campaign (SetSending) and
// returns the TTL in force. A driver without SetSending keeps neither: the
// campaign holds the column's default (campaign.DefaultMaxHeld, no TTL), so
// a run asking for those sends, one asking for others is refused.
func setSending(ctx context.Context, st driver.Driver, id int64, maxHeld int, ttl time.Duration) (time.Duration, error) {
	if k, ok := st.(sendingKeeper); ok {
		return k.SetSending(ctx, id, maxHeld, ttl)
	}
	if maxHeld != campaign.DefaultMaxHeld || ttl > 0 {
		return 0, fmt.Errorf("--max-held and --ttl: the database at %s cannot keep them yet (its driver has no SetSending); run without them", st.Path())
	}
	return 0, nil
}

// setBudget is SetBudget where the driver has it; --max-cost is refused
// where it has not.
func setBudget(ctx context.Context, st driver.Driver, id int64, max pricing.Micros, currency string, price func(phone string) pricing.Micros) error {
	if k, ok := st.(budgetKeeper); ok {
		return k.SetBudget(ctx, id, max, currency, price)
	}
	return fmt.Errorf("--max-cost: the database at %s cannot keep a budget yet (its driver has no SetBudget); run without it", st.Path())
}
