// Package readmodel answers what status, `campaign show` and `list`,
// results, delivery figures, export, activity, the queue, the plan's
// portfolio windows, the suppression list and the runners holding a
// campaign's rows read: queries over the store's database that never write. The store keeps the rows and
// the counts its triggers keep as rows move; this package only reads them,
// so a new figure is a query here, not a method on the store.
//
// It does not import the store: it reads through Source, which every
// driver of the store implements (SQLite's *store.Store, pgstore's), so
// the store's own tests may read through it. Its queries are written once
// for both databases; the little that differs is the Dialect (dialect.go).
package readmodel

import (
	"context"
	"database/sql"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Source is the store as the read models see it.
type Source interface {
	// Reader is the database handle for queries that only read; nothing
	// here writes through it.
	Reader() *sql.DB
	// Now is the store's clock: the last hour, the queue's due rows and
	// the recent sends are measured from it.
	Now() time.Time
	// Location is the zone quota days are counted in: warm-up's record
	// is by quota day.
	Location() *time.Location
	// Campaign and Counts are the store's: only it decodes a campaign's
	// row, and its count check reads the same counts.
	Campaign(ctx context.Context, id int64) (campaign.Campaign, error)
	Counts(ctx context.Context, id int64) (campaign.Counts, error)
	// Portfolios is the store's too: the limit that applies and who counts
	// towards it are what claims read.
	Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error)
}

// Reader runs the read models' queries on a Source, in its Reader's
// dialect.
type Reader struct {
	src Source
	db  handle
}

// New returns a Reader over src.
func New(src Source) *Reader {
	return &Reader{src: src, db: handle{db: src.Reader(), d: dialectOf(src)}}
}

func (r *Reader) now() time.Time { return r.src.Now() }

// The store keeps instants as Unix nanoseconds, 0 or NULL for none.

var (
	nanos         = rowscan.Nanos
	fromNanos     = rowscan.FromNanos
	fromNullNanos = rowscan.FromNullNanos
)

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
