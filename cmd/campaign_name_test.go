package cmd

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCampaignNamesOneLine: a name with a tab or line break is refused
// where it is given (--name, rename) with the character and its place; a
// file's name becomes one line; and a name stored before the rule is
// escaped in tables, so a piped row keeps its columns.
func TestCampaignNamesOneLine(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"campaign", "import", list, "--text", "hi", "--ignore-window", "--name", "spring\tsale"}, []string{"a tab", "character 7"}},
		{[]string{"campaign", "run", list, "--text", "hi", "--ignore-window", "--name", "spring\nsale"}, []string{"a line break", "character 7"}},
	} {
		code, msg := c.exit(tt.args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", tt.args, code, ExitUsage, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q: %q does not say %q", tt.args, msg, w)
			}
		}
	}
	if got := c.ok("campaign", "list"); got != "" {
		t.Fatalf("a refused name imported a campaign:\n%s", got)
	}

	// A file's own name, a tab in it, names its campaign on one line.
	odd := filepath.Join(t.TempDir(), "odd\tname.csv")
	if err := os.WriteFile(odd, []byte("phone\n+4915123456701\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("campaign", "import", odd, "--text", "hi", "--ignore-window")
	c.ok("campaign", "import", list, "--text", "hi", "--ignore-window")
	if rows := c.table("campaign", "list"); len(rows) != 2 || rows[0]["NAME"] != "odd name.csv" {
		t.Errorf("campaigns %v, want the first named \"odd name.csv\"", rows)
	}
	code, msg := c.exit("campaign", "rename", "2", "x\r\ny")
	if code != ExitUsage || !strings.Contains(msg, "a carriage return at character 2") {
		t.Errorf("rename to two lines: exit %d\n%s", code, msg)
	}

	// A name stored before the rule.
	db, err := sql.Open("sqlite3", "file:"+c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE campaigns SET name = ? WHERE id = 2`, "old\tname\nwith lines"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"campaign", "list"}, {"status"}} {
		out := c.ok(args...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		var fields []int
		for _, l := range lines {
			fields = append(fields, strings.Count(l, "\t"))
		}
		if !strings.Contains(out, `old\tname\nwith lines`) {
			t.Errorf("%s: the stored name is not shown escaped:\n%s", args, out)
		}
		if args[0] == "campaign" && (len(lines) != 2 || fields[0] != fields[1]) {
			t.Errorf("%s piped: %d lines with %v tabs, want 2 alike:\n%s", args, len(lines), fields, out)
		}
	}
}
