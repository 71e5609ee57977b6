package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// crontab is a crontab as the docs print it: its variable lines and its
// one job line's command (what cron hands to /bin/sh -c).
type crontab struct {
	lines   []string // every line that is not a comment, in order
	env     []string // NAME=value lines
	command string   // the job line after its five time fields
}

var cronJob = regexp.MustCompile(`^(\S+\s+){5}(.+)$`)

// cronBlock parses the fenced block of the markdown file that holds a job
// line: the first whose lines are all variables, comments or one job.
func cronBlock(t *testing.T, path string) crontab {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```")
	for i := 1; i < len(blocks); i += 2 {
		var c crontab
		ok := true
		_, body, _ := strings.Cut(blocks[i], "\n") // the info string
		for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
			l = strings.TrimSpace(l)
			switch {
			case l == "" || strings.HasPrefix(l, "#"):
				continue
			case regexp.MustCompile(`^[A-Z_]+=\S*$`).MatchString(l):
				c.env = append(c.env, l)
			case cronJob.MatchString(l) && strings.HasPrefix(l, "0 ") && c.command == "":
				c.command = cronJob.FindStringSubmatch(l)[2]
			default:
				ok = false
			}
			c.lines = append(c.lines, l)
		}
		if ok && c.command != "" {
			return c
		}
	}
	t.Fatalf("%s: no crontab block", path)
	return crontab{}
}

// The crontab of docs/operations.md ("Cron") works under cron as written:
// its command, run by /bin/sh under `env -i` with only the variables the
// crontab sets (no PATH, no HOME), starts the quota day of a real database
// whose zone is the crontab's CRON_TZ. Only the binary's and the
// database's paths are put in place of the documented ones. The README's
// and `quota reset --help`'s crontab lines are the same.
func TestDocumentedCrontabWorks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wasend")
	}
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Skip(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	doc := cronBlock(t, filepath.Join("..", "docs", "operations.md"))
	if readme := cronBlock(t, filepath.Join("..", "README.md")); !slices.Equal(readme.lines, doc.lines) {
		t.Errorf("README.md's crontab %q differs from docs/operations.md's %q", readme.lines, doc.lines)
	}
	c := newCLI(t)
	help := c.ok("quota", "reset", "--help")
	for _, l := range doc.lines {
		if !strings.Contains(help, "\n  "+l+"\n") {
			t.Errorf("quota reset --help lacks the crontab line %q:\n%s", l, help)
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^# WASEND_LIMITS=redis://\S+$`).Match(raw) {
		t.Errorf("docs/operations.md's crontab lacks the commented WASEND_LIMITS line for several hosts")
	}

	// The documented values: a zone, and absolute paths (cron has no PATH
	// and no working directory of yours).
	vars := map[string]string{}
	for _, kv := range doc.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	zone := vars["CRON_TZ"]
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" {
		t.Fatalf("crontab CRON_TZ=%q: %v", zone, err)
	}
	docDB := vars["WASEND_DB"]
	words := strings.Fields(doc.command)
	if !filepath.IsAbs(docDB) || !filepath.IsAbs(words[0]) || filepath.Base(words[0]) != "wasend" {
		t.Fatalf("crontab names WASEND_DB=%q and binary %q, want absolute paths", docDB, words[0])
	}

	bin := filepath.Join(t.TempDir(), "wasend")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/wasend/wasend").CombinedOutput(); err != nil {
		t.Fatalf("build wasend: %v\n%s", err, out)
	}
	// A database whose quota days are CRON_TZ's, last started years ago.
	c.env["WASEND_TZ"] = zone
	c.now = time.Date(2020, 6, 1, 12, 0, 0, 0, loc)
	c.addAccounts()

	var env []string
	for _, kv := range doc.env {
		if strings.HasPrefix(kv, "WASEND_DB=") {
			kv = "WASEND_DB=" + c.db
		}
		env = append(env, kv)
	}
	line := bin + strings.TrimPrefix(doc.command, words[0])
	before := time.Now()
	cmd := exec.Command(envBin, append(append([]string{"-i"}, env...), "/bin/sh", "-c", line)...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("env -i %s /bin/sh -c %q: %v\n%s", strings.Join(env, " "), line, err, out)
	}
	c.now = time.Now()
	days := []string{before.In(loc).Format(time.DateOnly), c.now.In(loc).Format(time.DateOnly)}
	for _, a := range c.status().Accounts {
		if !slices.Contains(days, a.QuotaDay) {
			t.Errorf("%s: quota_day %q after the crontab's reset, want today in %s (%s)\n%s", a.Name, a.QuotaDay, zone, days[1], out)
		}
	}
	if !strings.Contains(string(out), "new quota day") || !strings.Contains(string(out), "next quota day starts") {
		t.Errorf("the crontab's reset said:\n%s", out)
	}
}
