package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkWritableDir says in plain words when the database's directory can't
// be written: SQLite keeps its journal (the -wal and -shm files) beside
// the database, so a read-only directory fails even for a file that exists,
// with a message about neither.
func checkWritableDir(path string) error {
	dir := filepath.Dir(path)
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return unwritable(dir, err)
	}
	return nil
}

// unwritable explains a permission or read-only error on dir, or returns
// err as it is.
func unwritable(dir string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		what := "is not writable by this user"
		if errors.Is(err, syscall.EROFS) {
			what = "is on a read-only file system"
		}
		return fmt.Errorf("database directory %s %s: wasend keeps its database and journal files there; "+
			"choose a writable place with --db or WASEND_DB: %w", dir, what, err)
	}
	return err
}

// parentThatExists is dir or its nearest existing ancestor: the one that
// refused the new directory.
func parentThatExists(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}
