package runner_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/screen"
)

// TestFingerprintShard: each shard of a file has a source key of its own;
// the whole list keeps the key it had before shards were part of it, so
// campaigns stored then are found again.
func TestFingerprintShard(t *testing.T) {
	const file = "phone\n+4915123456700\n"
	spec := campaign.Spec{Kind: campaign.KindText, Text: "Hi"}
	key := func(sh screen.Shard) string {
		t.Helper()
		k, err := runner.Fingerprint(strings.NewReader(file), spec, runner.ReadOptions{Region: "de", Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	// The key as computed before the shard was part of it.
	h := sha256.New()
	h.Write([]byte(file))
	meta, _ := json.Marshal(struct {
		Spec campaign.Spec
		Read struct {
			Region              string
			Delimiter           rune
			PhoneColumn         string
			SkipContactedWithin time.Duration
		}
	}{Spec: spec, Read: struct {
		Region              string
		Delimiter           rune
		PhoneColumn         string
		SkipContactedWithin time.Duration
	}{Region: "DE"}})
	h.Write([]byte{0})
	h.Write(meta)
	old := hex.EncodeToString(h.Sum(nil))

	whole, one, two := key(screen.Shard{}), key(screen.Shard{K: 1, N: 2}), key(screen.Shard{K: 2, N: 2})
	if whole != old || key(screen.Shard{K: 1, N: 1}) != old {
		t.Errorf("the whole list's key changed: %s, was %s", whole, old)
	}
	if one == whole || two == whole || one == two {
		t.Errorf("shards share a key: whole %s, 1/2 %s, 2/2 %s", whole, one, two)
	}
}
