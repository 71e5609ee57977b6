package migrate

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

func TestFilesInVersionOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"migrations/0010_later.sql": {Data: []byte("SELECT 1")},
		"migrations/0002_first.sql": {Data: []byte("SELECT 1")},
		"migrations/0003_next.sql":  {Data: []byte("SELECT 1")},
		"migrations/README.md":      {Data: []byte("not a migration")},
	}
	files, err := Files(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{2, "0002_first.sql", "migrations/0002_first.sql"},
		{3, "0003_next.sql", "migrations/0003_next.sql"},
		{10, "0010_later.sql", "migrations/0010_later.sql"},
	}
	if len(files) != len(want) {
		t.Fatalf("Files = %v, want %v", files, want)
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("file %d = %+v, want %+v", i, files[i], want[i])
		}
	}
}

func TestFilesRefuseANameWithoutVersion(t *testing.T) {
	_, err := Files(fstest.MapFS{"migrations/add_index.sql": {Data: []byte("SELECT 1")}})
	if err == nil || !strings.Contains(err.Error(), "add_index.sql") {
		t.Errorf("Files = %v, want an error naming add_index.sql", err)
	}
}

// countingLock counts how often Run takes the writers' mutex.
type countingLock struct {
	sync.Mutex
	n int
}

func (l *countingLock) Lock() { l.Mutex.Lock(); l.n++ }

// TestRunSkipsAppliedWithoutLocking: a database that has every migration
// is opened without a transaction (or the writers' mutex) per migration;
// one it lacks is applied, once.
func TestRunSkipsAppliedWithoutLocking(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER)")},
		"migrations/0002_b.sql": {Data: []byte("INSERT INTO a VALUES (1)")},
	}
	run := func() int {
		t.Helper()
		lock := &countingLock{}
		if err := Run(ctx, db, fsys, Options{Lock: lock, Now: time.Now, StorageError: func(err error) error { return err }}); err != nil {
			t.Fatal(err)
		}
		return lock.n
	}
	if n := run(); n != 2 {
		t.Errorf("a new database: %d migrations applied, want 2", n)
	}
	if n := run(); n != 0 {
		t.Errorf("an up-to-date database: the writers' mutex taken %d times, want 0", n)
	}
	fsys["migrations/0003_c.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO a VALUES (3)")}
	if n := run(); n != 1 {
		t.Errorf("one migration new: the writers' mutex taken %d times, want 1", n)
	}
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM a`).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("rows = %d, %v; want 2 (each migration once)", rows, err)
	}
}
