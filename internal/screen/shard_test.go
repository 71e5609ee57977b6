package screen

import (
	"fmt"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"2/3", Shard{2, 3}, true},
		{" 1 / 1 ", Shard{1, 1}, true},
		{"3/3", Shard{3, 3}, true},
		{"0/3", Shard{}, false},
		{"4/3", Shard{}, false},
		{"2", Shard{}, false},
		{"a/b", Shard{}, false},
		{"1/0", Shard{}, false},
	} {
		got, err := ParseShard(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// Every number is in exactly one of N shards, and the shards are about
// even; the whole list (the zero Shard, or 1/1) has every number.
func TestShardsPartition(t *testing.T) {
	const n, numbers = 3, 3000
	sizes := make([]int, n)
	for i := range numbers {
		phone := fmt.Sprintf("+49151%08d", i*7919)
		in := 0
		for k := 1; k <= n; k++ {
			if (Shard{k, n}).Has(phone) {
				in++
				sizes[k-1]++
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d shards, want 1", phone, in)
		}
		if !(Shard{}).Has(phone) || !(Shard{1, 1}).Has(phone) {
			t.Fatalf("%s is not in the whole list", phone)
		}
	}
	for k, s := range sizes {
		if s < numbers/n*8/10 {
			t.Errorf("shard %d/%d has %d of %d numbers: uneven %v", k+1, n, s, numbers, sizes)
		}
	}
}
