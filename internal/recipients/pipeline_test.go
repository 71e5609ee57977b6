package recipients

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// step is what one call of Next returned.
type step struct {
	Row Row
	Err string
}

// drain calls next until io.EOF or a fatal error; sticky checks that a
// fatal error is also what the next call returns.
func drain(t *testing.T, next func() (Row, error), sticky bool) []step {
	t.Helper()
	var out []step
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			return out
		}
		s := step{Row: row}
		if err != nil {
			s.Err = err.Error()
			var re *RowError
			if !errors.As(err, &re) {
				if _, again := next(); sticky && (again == nil || again.Error() != err.Error()) {
					t.Errorf("after fatal %v, Next returned %v", err, again)
				}
				return append(out, s)
			}
		}
		out = append(out, s)
	}
}

// Parallel gives exactly what Reader.Next gives, call for call: rows, row
// errors with their lines, duplicates, and a fatal error where it occurs.
func TestParallelMatchesNext(t *testing.T) {
	var big strings.Builder
	big.WriteString("phone,name,code\n")
	for i := range 3000 {
		switch {
		case i%13 == 0:
			fmt.Fprintf(&big, "not a number %d,Ann,%d\n", i, i)
		case i%17 == 0:
			fmt.Fprintf(&big, "+4915100%06d,,%d\n", i, i) // missing parameter
		case i%29 == 0:
			big.WriteString(",,\n") // blank
		default:
			fmt.Fprintf(&big, "+4915100%06d,\"Ann\nLee\",%d\n", i%1000, i) // repeats after 1000
		}
	}
	files := map[string]string{
		"big.csv":   big.String(),
		"fatal.csv": big.String()[:len(big.String())/2] + "+4915100000001,\"broken,1\n" + big.String(),
	}
	corpus, _ := filepath.Glob("../../testdata/csv/*.csv")
	for _, f := range corpus {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(f)] = string(b)
	}
	opts := Options{Params: []string{"name"}, FindDuplicates: true, Region: "DE"}
	for name, content := range files {
		rd, err := Open(strings.NewReader(content), name, opts)
		if err != nil {
			continue // whole-file problems never reach a Pipeline
		}
		want := drain(t, rd.Next, false)
		for _, workers := range []int{1, 2, 5} {
			rd, err := Open(strings.NewReader(content), name, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := Parallel(rd, workers)
			got := drain(t, p.Next, true)
			p.Close()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d workers: %d steps differ from Next's %d", name, workers, len(got), len(want))
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Errorf("first difference at %d: got %+v, want %+v", i, got[i], want[i])
						break
					}
				}
			}
		}
	}
}

// Close stops a Pipeline that was not read to the end, however far it got.
func TestParallelCloseEarly(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone\n")
	for i := range 20 * chunkRecords {
		fmt.Fprintf(&b, "+4915100%06d\n", i)
	}
	for _, reads := range []int{0, 1, chunkRecords + 3} {
		rd, err := Open(strings.NewReader(b.String()), "x.csv", Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := Parallel(rd, 2)
		for range reads {
			if _, err := p.Next(); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		p.Close()
	}
}
