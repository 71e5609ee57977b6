package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/dbfile"
)

// Options configure a driver's Open; zero values get defaults. What is a
// file's (BusyTimeout, ExistingDir, MustExist) only SQLite's store.Open
// reads; runner.OpenStore gives a Postgres driver the clock and the zone.
type Options struct {
	// Now is the clock for timestamps the driver writes itself.
	Now func() time.Time
	// Location is the zone of quota days asked for (WASEND_TZ); nil asks
	// for none. A new database stores it (or the local zone) on first
	// use; after that the stored zone decides, and a Location that
	// disagrees makes ResetQuota fail with a *campaign.ZoneMismatchError.
	Location *time.Location
	// BusyTimeout bounds how long a write waits for another process.
	BusyTimeout time.Duration
	// ExistingDir: the database's directory must exist already (a path the
	// user named, where a typo must not create directories); otherwise it
	// is created.
	ExistingDir bool
	// MustExist: open only a database that exists; ErrNoDatabase
	// otherwise. Commands that only read or maintain set it, so that a
	// wrong path or environment (cron's) never starts an empty database.
	MustExist bool
}

// ErrNoDatabase is a database file that does not exist, opened with
// MustExist.
var ErrNoDatabase = dbfile.ErrNoDatabase

// ErrStorage marks a failure of the disk under the database.
var ErrStorage = errors.New("storage failure")

// RemovedName is what a removed account is called from then on: its name
// is free for a new account, and its history still reads as its own.
func RemovedName(name string, id int64) string {
	return fmt.Sprintf("%s (removed #%d)", name, id)
}
