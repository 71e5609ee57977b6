package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/store/driver"
)

// A database in a read-only directory fails at Open with the directory
// named, even when the file itself exists (SQLite's journal goes beside
// it). Root writes anywhere, so the test needs another user.
func TestOpenReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only directories")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	_, err := Open(context.Background(), filepath.Join(dir, "w.db"), driver.Options{})
	if err == nil || !strings.Contains(err.Error(), "database directory "+dir+" is not writable") {
		t.Errorf("Open in a read-only directory: %v", err)
	}
}
