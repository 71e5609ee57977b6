// Package sqliteconfig sets SQLite's process-wide configuration, which
// SQLite takes only before it initialises (at the first connection opened):
// it is set in init, before any code can open one, and Open, the store's
// way to a database handle, fails if it could not be.
//
// Each setting was measured with callgrind (docs/performance-notes.md,
// session 18):
//   - Memory statistics off. By default SQLite counts its memory
//     (sqlite3_memory_used, the soft heap limit) under a global mutex taken
//     at every malloc and free; wasend reads none of it.
//
// A larger lookaside (SQLITE_CONFIG_LOOKASIDE) saved 2 % more but cost
// 2.4 MB a connection, which put the 1M-row import over its 64 MiB.
package sqliteconfig

/*
// mattn/go-sqlite3's amalgamation defines them; cgo cannot call a variadic
// C function, hence the wrappers.
int sqlite3_config(int, ...);
long long sqlite3_memory_used(void);

#define SQLITE_CONFIG_MEMSTATUS 9

static int memstatus(int on) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on); }
static long long memory_used(void) { return sqlite3_memory_used(); }
*/
import "C"

import (
	"database/sql"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"
)

var configErr = configure()

// Open is sql.Open of the SQLite driver, once the configuration is set.
func Open(dsn string) (*sql.DB, error) {
	if configErr != nil {
		return nil, configErr
	}
	return sql.Open("sqlite3", dsn)
}

// configure sets the configuration; once SQLite has initialised it fails
// with SQLITE_MISUSE.
func configure() error {
	if rc := C.memstatus(0); rc != 0 {
		return fmt.Errorf("SQLite's configuration (memory statistics off): %w", sqlite3.ErrNo(rc))
	}
	return nil
}

// memoryUsed is sqlite3_memory_used: 0 while the statistics are off.
func memoryUsed() int64 { return int64(C.memory_used()) }
