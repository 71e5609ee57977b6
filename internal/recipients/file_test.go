package recipients

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each problem opening a recipient file names the file exactly once.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "ok.csv")
	if err := os.WriteFile(csv, []byte("phone\n+4915123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.csv")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.csv")
	for _, tt := range []struct {
		path string
		want string
		is   error
	}{
		{sub, "recipient file " + sub + " is a directory; give a CSV file", nil},
		{missing, "recipient file " + missing + ": no such file or directory", fs.ErrNotExist},
	} {
		_, err := OpenFile("recipient", tt.path)
		if err == nil || err.Error() != tt.want {
			t.Errorf("OpenFile(%s) = %v, want %q", tt.path, err, tt.want)
			continue
		}
		if n := strings.Count(err.Error(), tt.path); n != 1 {
			t.Errorf("%q names the file %d times", err, n)
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%v is not %v", err, tt.is)
		}
	}
	f, err := OpenFile("recipient", csv)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
