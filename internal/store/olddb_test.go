package store

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// oldDatabase makes a database file as a wasend from before the migration
// numbered before left it: every migration below it applied and recorded.
// exec runs more statements on it (rows for the test to carry over); close
// db before opening the file with the Store.
func oldDatabase(t *testing.T, before string) (path string, db *sql.DB, exec func(q string, args ...any)) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
	files, err := migrations.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() >= before {
			break
		}
		body, err := migrations.ReadFile("migrations/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO schema_migrations VALUES (?, ?, 0)`, f.Name()[:4], f.Name())
	}
	return path, db, exec
}
