package dbfile

import (
	"errors"
	"io/fs"
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
