package screen

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one of N parts of a recipient list: hosts given the same file
// and command, each with its own shard (--shard K/N), cover the list once.
// A number belongs to the shard its E.164 form hashes to, so the split is
// the same on every host and for every spelling of the number.
type Shard struct {
	K, N int // 1 ≤ K ≤ N; the zero Shard is the whole list
}

// ParseShard reads "K/N".
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 2/3", s)
	}
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 ≤ K ≤ N, e.g. 2/3", s)
	}
	return Shard{K: ki, N: ni}, nil
}

// String is the K/N form, "" for the whole list.
func (s Shard) String() string {
	if s.N <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Has reports whether the E.164 number phone is in the shard.
func (s Shard) Has(phone string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(phone))
	return int(h.Sum64()%uint64(s.N)) == s.K-1
}
