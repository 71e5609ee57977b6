// Package dbfile makes sure a database file exists and can be written
// before a driver opens it, saying in plain words which file or directory
// is wrong and why: SQLite's own errors name neither (and a read-only
// directory fails it even for a file that exists, since its -wal and -shm
// journal files go beside the database).
package dbfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoDatabase is a database file that does not exist, asked for without
// create.
var ErrNoDatabase = errors.New("does not exist")

// Prepare makes sure the database file at path exists (created with mode
// 0600 when create is set) and that it and its directory can be written.
// With existingDir the directory must exist already: a path the user
// named, where a typo must not create directories. Without create the file
// must exist too (ErrNoDatabase).
func Prepare(path string, existingDir, create bool) error {
	dir := filepath.Dir(path)
	if existingDir {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return fmt.Errorf("database %s %w", path, ErrNoDatabase)
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("database %s: the directory %s does not exist; create it first, or leave out --db (and WASEND_DB) for the default location", path, dir)
		case err != nil:
			return unwritable(dir, fmt.Errorf("database %s: %w", path, err))
		case !fi.IsDir():
			return fmt.Errorf("database %s: %s is not a directory", path, dir)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return unwritable(parentThatExists(dir), fmt.Errorf("create database directory: %w", err))
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return fmt.Errorf("database %s %w", path, ErrNoDatabase)
	}
	if err == nil && fi.IsDir() {
		return fmt.Errorf("database %s is a directory; name a file, e.g. %s", path, filepath.Join(path, "wasend.db"))
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return unwritable(dir, err)
	}
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return fmt.Errorf("database %s %w", path, ErrNoDatabase)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("database %s can't be opened for writing: this user may not write it (check its owner and mode): %w", path, err)
	}
	if err != nil {
		return unwritable(dir, fmt.Errorf("open database %s: %w", path, err))
	}
	return f.Close()
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
