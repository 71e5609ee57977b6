package campaign

import (
	"fmt"
	"math"
	"testing"
)

func TestCallbackData(t *testing.T) {
	if got := CallbackData(12, 345); got != "wasend:c12:m345" {
		t.Fatalf("CallbackData(12, 345) = %q", got)
	}
	// What fmt wrote before CallbackData appended its own digits.
	for _, ids := range [][2]int64{{1, 1}, {0, 0}, {-3, 40}, {math.MaxInt64, math.MinInt64}, {math.MinInt64, math.MaxInt64}} {
		if got, want := CallbackData(ids[0], ids[1]), fmt.Sprintf("wasend:c%d:m%d", ids[0], ids[1]); got != want {
			t.Errorf("CallbackData(%d, %d) = %q, want %q", ids[0], ids[1], got, want)
		}
	}
	for _, tc := range []struct {
		in       string
		cid, mid int64
		ok       bool
	}{
		{CallbackData(1, 2), 1, 2, true},
		{CallbackData(9007199254740993, 7), 9007199254740993, 7, true},
		{"", 0, 0, false},
		{"wasend:c1", 0, 0, false},
		{"wasend:c1:m", 0, 0, false},
		{"wasend:c:m2", 0, 0, false},
		{"wasend:c0:m2", 0, 0, false},
		{"wasend:c1:m-2", 0, 0, false},
		{"wasend:c1:+1111111111", 0, 0, false}, // the sandbox tests' own data
		{"other:c1:m2", 0, 0, false},
		{"wasend:c1:m2x", 0, 0, false},
	} {
		cid, mid, ok := ParseCallbackData(tc.in)
		if cid != tc.cid || mid != tc.mid || ok != tc.ok {
			t.Errorf("ParseCallbackData(%q) = %d, %d, %v; want %d, %d, %v", tc.in, cid, mid, ok, tc.cid, tc.mid, tc.ok)
		}
	}
}
