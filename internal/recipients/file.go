package recipients

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OpenFile opens a recipient (or suppression: what) file for reading.
// Every problem names the file once: a missing file, one that can't be
// read, a directory.
func OpenFile(what, path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said below, once
		}
		return nil, fmt.Errorf("%s file %s: %w", what, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s file %s: %w", what, path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s file %s is a directory; give a CSV file", what, path)
	}
	return f, nil
}
