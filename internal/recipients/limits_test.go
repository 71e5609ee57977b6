package recipients

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// An unclosed quote must not pull the rest of a big file into memory: the
// read stops soon after MaxRecord bytes with a clear error.
func TestUnclosedQuoteStopsAtRecordLimit(t *testing.T) {
	body := "phone,name\n+4915123456789,\"Ana\n" + strings.Repeat("+4915123456789,Ben\n", 3*MaxRecord/19)
	r, err := Open(strings.NewReader(body), "big.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("read to the end: the record limit did not hold")
		}
		var rowErr *RowError
		if errors.As(err, &rowErr) {
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrRecordTooLong) || !strings.Contains(err.Error(), "big.csv") {
			t.Fatalf("error %v: want ErrRecordTooLong naming the file", err)
		}
		if r.budget.n > MaxRecord+128<<10 {
			t.Errorf("read %d bytes for one record, limit %d", r.budget.n, MaxRecord)
		}
		return
	}
}
