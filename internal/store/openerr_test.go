package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestUnwritableInPlainWords(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/ro/w.db", Err: syscall.EACCES}, "database directory /ro is not writable by this user"},
		{&fs.PathError{Op: "open", Path: "/ro/w.db", Err: syscall.EROFS}, "database directory /ro is on a read-only file system"},
	} {
		err := unwritable("/ro", tt.err)
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--db or WASEND_DB") {
			t.Errorf("unwritable(%v) = %q, want %q and where to go instead", tt.err, err, tt.want)
		}
		if !errors.Is(err, tt.err.(*fs.PathError).Err) {
			t.Errorf("the cause is not wrapped: %v", err)
		}
	}
	other := errors.New("disk on fire")
	if got := unwritable("/x", other); got != other {
		t.Errorf("another error is changed: %v", got)
	}
}

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
	_, err := Open(context.Background(), filepath.Join(dir, "w.db"), Options{})
	if err == nil || !strings.Contains(err.Error(), "database directory "+dir+" is not writable") {
		t.Errorf("Open in a read-only directory: %v", err)
	}
}
