package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenMan: wasend gen man DIR writes a page for every command that
// runs or groups others (none for hidden ones), wasend(1) carries the exit
// codes and the environment, and a second run with SOURCE_DATE_EPOCH set
// writes the same bytes.
func TestGenMan(t *testing.T) {
	c := newCLI(t)
	c.env["SOURCE_DATE_EPOCH"] = "1764547200" // 2025-12-01
	dir := filepath.Join(t.TempDir(), "man")
	c.ok("gen", "man", dir)
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	root := read("wasend.1")
	for _, want := range []string{`.TH "WASEND" "1" "Dec 2025"`, ".SH EXIT STATUS", ".B 130", ".SH ENVIRONMENT", ".B WASEND_DB", `\-\-stop\-when\-capped`} {
		if !strings.Contains(root, want) {
			t.Errorf("wasend.1 has no %q:\n%s", want, root)
		}
	}
	run := read("wasend-campaign-run.1")
	for _, want := range []string{`\fB--webhook-addr\fP`, "wasend campaign run", ".SH EXAMPLE"} {
		if !strings.Contains(run, want) {
			t.Errorf("wasend-campaign-run.1 has no %q", want)
		}
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 40 {
		t.Errorf("%d man pages", len(pages))
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if strings.HasPrefix(name, "wasend-gen") || strings.Contains(name, "exit-codes") || strings.Contains(name, "Auto generated") {
			t.Errorf("page %s: hidden commands and help topics get none", name)
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "Auto generated") {
			t.Errorf("%s is dated by cobra's auto-generated line", name)
		}
	}

	again := filepath.Join(t.TempDir(), "man")
	c.ok("gen", "man", again)
	for _, p := range pages {
		b, err := os.ReadFile(filepath.Join(again, filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != read(filepath.Base(p)) {
			t.Errorf("%s differs between two runs", filepath.Base(p))
		}
	}
}
