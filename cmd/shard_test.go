package cmd

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/screen"
)

// TestShardsCoverTheListOnce: three hosts (three databases) import the
// same file, each with its own --shard K/3: together they hold every
// valid number of the file once, and each says how many rows it left to
// the others.
func TestShardsCoverTheListOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone,name\n")
	const rows = 90
	for i := range rows {
		fmt.Fprintf(&b, "+49 151 %08d,n%d\n", 20000000+i*37, i)
	}
	b.WriteString("not-a-number,x\n")
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for k := 1; k <= 3; k++ {
		c := newCLI(t)
		_, stderr, err := c.run("campaign", "import", list, "--template", "t", "--lang", "en", "--params", "name",
			"--shard", fmt.Sprintf("%d/3", k))
		if err != nil {
			t.Fatalf("shard %d/3: %v\n%s", k, err, stderr)
		}
		if !strings.Contains(stderr, "rows are other shards'") {
			t.Errorf("shard %d/3 does not say what it left to others:\n%s", k, stderr)
		}
		db, err := sql.Open("sqlite3", c.db)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := db.Query(`SELECT phone FROM messages`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rs.Next() {
			var p string
			if err := rs.Scan(&p); err != nil {
				t.Fatal(err)
			}
			seen[p]++
			n++
		}
		rs.Close()
		db.Close()
		if n == 0 || n == rows {
			t.Errorf("shard %d/3 holds %d of %d numbers", k, n, rows)
		}
	}
	if len(seen) != rows {
		t.Errorf("the shards hold %d distinct numbers, want all %d", len(seen), rows)
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s is in %d shards", p, n)
		}
	}
	c := newCLI(t)
	if _, _, err := c.run("campaign", "import", list, "--template", "t", "--lang", "en", "--params", "name", "--shard", "4/3"); exitCode(err, io.Discard) != ExitUsage {
		t.Errorf("--shard 4/3: %v, want a usage error (exit 2)", err)
	}
}

// TestCheckShardSaysWhatItLeft: `campaign check --shard` says how many rows
// are other shards' (it said "N rows read" of a shard alone, as if the file
// were that short), in text and --json.
func TestCheckShardSaysWhatItLeft(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range 30 {
		fmt.Fprintf(&b, "+49 151 %08d,n%d\n", 20000000+i*37, i)
	}
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	c.emptyDB()
	args := []string{"campaign", "check", list, "--template", "t", "--lang", "en", "--params", "name", "--shard", "1/3"}
	out := c.ok(args...)
	var read, left int
	if _, err := fmt.Sscanf(out[strings.Index(out, ": ")+2:], "%d rows read", &read); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	i := strings.Index(out, "; ")
	if i < 0 {
		t.Fatalf("check does not say what it left to other shards:\n%s", out)
	}
	if _, err := fmt.Sscanf(out[i+2:], "%d rows are other shards'", &left); err != nil || read+left != 30 {
		t.Errorf("check: %d rows read and %d other shards', want 30 in all (%v)\n%s", read, left, err, out)
	}
	if js := c.ok(append(args, "--json")...); !strings.Contains(js, fmt.Sprintf(`"other_shards": %d`, left)) {
		t.Errorf("check --json has no other_shards %d:\n%s", left, js)
	}
}

// TestShardIsPartOfTheIdentity: on one database, `import --shard 1/2`
// then `run --shard 2/2` runs shard 2's own campaign: shard 1's rows are
// not sent, every number of shard 2 is imported and sent, and a second
// `run --shard 2/2` finds that campaign again instead of shard 1's.
func TestShardIsPartOfTheIdentity(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone,name\n")
	const rows = 12
	for i := range rows {
		fmt.Fprintf(&b, "+49 151 %08d,n%d\n", 30000000+i*41, i)
	}
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	msg := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	c.ok(append([]string{"campaign", "import", list, "--sandbox", "--shard", "1/2"}, msg...)...)
	if _, errOut, err := c.run(append([]string{"campaign", "run", list, "--sandbox", "--shard", "2/2"}, msg...)...); err != nil {
		t.Fatalf("run --shard 2/2: %v\n%s", err, errOut)
	}
	shardOf := map[int64]string{1: "1/2", 2: "2/2"}
	check := func(when string) {
		db, err := sql.Open("sqlite3", c.db)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rs, err := db.Query(`SELECT campaign_id, phone, state FROM messages`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		n := map[int64]int{}
		for rs.Next() {
			var (
				id           int64
				phone, state string
			)
			if err := rs.Scan(&id, &phone, &state); err != nil {
				t.Fatal(err)
			}
			n[id]++
			sh, _ := screen.ParseShard(shardOf[id])
			switch {
			case shardOf[id] == "":
				t.Errorf("%s: a campaign %d besides the two shards'", when, id)
			case !sh.Has(phone):
				t.Errorf("%s: campaign %d (shard %s) holds %s, another shard's", when, id, shardOf[id], phone)
			case id == 1 && state != "pending":
				t.Errorf("%s: shard 1's %s is %s; only shard 2 was run", when, phone, state)
			case id == 2 && state != "sent":
				t.Errorf("%s: shard 2's %s is %s, want sent", when, phone, state)
			}
		}
		if n[1]+n[2] != rows || n[1] == 0 || n[2] == 0 {
			t.Errorf("%s: shard 1 holds %d rows, shard 2 %d; want all %d between them", when, n[1], n[2], rows)
		}
	}
	check("after run --shard 2/2")
	out, errOut, err := c.run(append([]string{"campaign", "run", list, "--sandbox", "--shard", "2/2"}, msg...)...)
	if err != nil {
		t.Fatalf("second run --shard 2/2: %v\n%s%s", err, out, errOut)
	}
	check("after a second run --shard 2/2")
}
