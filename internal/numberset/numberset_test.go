package numberset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestNumberSet(t *testing.T) {
	s := New()
	for _, c := range []struct {
		number    string
		line      int
		wantFirst int
		wantDup   bool
	}{
		{"+4915100000001", 2, 0, false},
		{"+4915100000002", 3, 0, false},
		{"+4915100000001", 4, 2, true},
		{"+0049151000001", 5, 0, false}, // leading zeros are digits too
		{"+49151000001", 6, 0, false},
		{"+0049151000001", 7, 5, true},
		{"+123456789012345678", 8, 0, false}, // too long for a key: kept aside
		{"+123456789012345678", 9, 8, true},
		{"4915100000001", 10, 0, false}, // no +: not the same as line 2
		{"+49 151", 11, 0, false},
		{"+49 151", 12, 11, true},
		{"+", 13, 0, false},
		{"", 14, 0, false},
		{"", 15, 14, true},
		{"+4915100000003", math.MaxUint32 + 2, 0, false}, // a line past uint32
		{"+4915100000003", 16, math.MaxUint32 + 2, true},
	} {
		first, dup := s.Add(c.number, c.line)
		if first != c.wantFirst || dup != c.wantDup {
			t.Errorf("add(%q, %d) = %d, %v; want %d, %v", c.number, c.line, first, dup, c.wantFirst, c.wantDup)
		}
	}
}

// The set agrees with a map over a million numbers, through every growth.
func TestNumberSetMatchesMap(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	s := New()
	want := map[string]int{}
	for line := 2; line < n+2; line++ {
		number := fmt.Sprintf("+%d", 491510000000+rnd.IntN(n)) // about a third repeat
		if line%1000 == 0 {
			number = fmt.Sprintf("+1%d", rnd.IntN(100)) // short numbers, many repeats
		}
		first, dup := s.Add(number, line)
		wantFirst, wantDup := want[number]
		if !wantDup {
			want[number] = line
			wantFirst = 0
		}
		if first != wantFirst || dup != wantDup {
			t.Fatalf("line %d: add(%q) = %d, %v; want %d, %v", line, number, first, dup, wantFirst, wantDup)
		}
	}
	if s.n != len(want) || s.n <= n/2 {
		t.Errorf("set holds %d numbers, map %d", s.n, len(want))
	}
}

func BenchmarkNumberSetAdd(b *testing.B) {
	numbers := make([]string, 1<<20)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range numbers {
		numbers[i] = fmt.Sprintf("+49151%08d", rnd.IntN(100_000_000))
	}
	b.ResetTimer()
	s := New()
	for i := range b.N {
		if i%len(numbers) == 0 {
			s = New()
		}
		s.Add(numbers[i%len(numbers)], i)
	}
}
