package runner

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// MoveStoreOptions are `wasend store migrate`'s.
type MoveStoreOptions struct {
	From string // the SQLite file
	To   string // the Postgres URL; it may hold a password, which no error names
	Now  func() time.Time
}

// StoreMove is what a move found and did, table by table.
type StoreMove = pgstore.CopyReport

// The move's refusals: a Postgres database holding rows that are not the
// file's copy, and a copy that did not come out equal (rolled back).
var (
	ErrTargetHoldsData = pgstore.ErrTargetHoldsData
	ErrCopyDiffers     = pgstore.ErrCopyDiffers
)

// MoveStore copies the SQLite database From, every table of it, into the
// Postgres database To (pgstore.CopyFromSQLite): the store opens the file
// (the one place that opens SQLite; an older file is migrated first, as
// every command does), the Postgres driver migrates its side and copies,
// since the copy is COPY and Postgres's schema, which only it speaks.
func MoveStore(ctx context.Context, o MoveStoreOptions) (StoreMove, error) {
	src, err := store.Open(ctx, o.From, driver.Options{Now: o.Now, ExistingDir: true, MustExist: true})
	if err != nil {
		return StoreMove{}, err
	}
	defer src.Close()
	return pgstore.CopyFromSQLite(ctx, src.Reader(), o.To, pgstore.CopyOptions{Now: o.Now})
}
