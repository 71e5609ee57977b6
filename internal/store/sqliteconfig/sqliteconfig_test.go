package sqliteconfig

import (
	"errors"
	"path/filepath"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// open opens a database through Open and writes to it, so that SQLite has
// initialised and allocated.
func open(t *testing.T) {
	t.Helper()
	db, err := Open("file:" + filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (x TEXT); INSERT INTO t VALUES (hex(randomblob(5000)))`); err != nil {
		t.Fatal(err)
	}
}

func TestConfigured(t *testing.T) {
	if configErr != nil {
		t.Fatal(configErr)
	}
	open(t)
	// Counted, the statistics would hold the connection's page cache and schema.
	if n := memoryUsed(); n != 0 {
		t.Errorf("sqlite3_memory_used = %d with the statistics off, want 0", n)
	}
}

// TestConfigureAfterInitialisingFails: configured too late, SQLite refuses,
// and says so.
func TestConfigureAfterInitialisingFails(t *testing.T) {
	open(t)
	if err := configure(); !errors.Is(err, sqlite3.ErrMisuse) {
		t.Fatalf("configuring after SQLite initialised: %v, want SQLITE_MISUSE", err)
	}
}

func TestOpenFailsUnconfigured(t *testing.T) {
	open(t)
	defer func(err error) { configErr = err }(configErr)
	configErr = configure() // too late: SQLITE_MISUSE
	if db, err := Open("file:" + filepath.Join(t.TempDir(), "t.db")); !errors.Is(err, sqlite3.ErrMisuse) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open after a failed configuration: %v, want its error", err)
	}
}
