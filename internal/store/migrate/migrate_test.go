package migrate

import (
	"strings"
	"testing"
	"testing/fstest"
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
