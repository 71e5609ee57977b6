package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/limits/redistest"
)

func TestLimitsStatusShowsTheSharedState(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.addAccounts()
	c.ok("portfolio", "add", "acme-with-a-rather-long-portfolio-name", "--limit", "1000")
	c.ok("account", "set", "fresh-02", "--portfolio", "acme-with-a-rather-long-portfolio-name")

	// Without a URL there is nothing to show: a usage error.
	if code, out := c.exit("limits", "status"); code != ExitUsage || !strings.Contains(out, "--limits") {
		t.Errorf("limits status without --limits: exit %d\n%s", code, out)
	}

	c.env["WASEND_LIMITS"] = "redis://:s3cret@" + r.Addr() + "/0"
	// Nothing started yet: the state is lost, and a plain reset says so.
	if code, out := c.exit("quota", "reset"); code != ExitError || !strings.Contains(out, "--force") || strings.Contains(out, "s3cret") {
		t.Errorf("plain reset of a lost state: exit %d\n%s", code, out)
	}
	out := c.ok("quota", "reset", "--force")
	for _, want := range []string{"main-01: shared quota day 2026-11-30#1 started (Redis had none)", "fresh-02: shared quota day 2026-11-30#1 started"} {
		if !strings.Contains(out, want) {
			t.Errorf("forced reset does not say %q:\n%s", want, out)
		}
	}
	if out := c.ok("quota", "reset"); !strings.Contains(out, "main-01: shared quota day 2026-11-30#1 already open, unchanged") {
		t.Errorf("a second plain reset must leave the shared day:\n%s", out)
	}

	rows := c.table("limits", "status")
	want := map[string][2]string{"main-01": {"default", "0/300"}, "fresh-02": {"acme-with-a-rather-long-portfolio-name", "0/50"},
		"(reach 24h)": {"acme-with-a-rather-long-portfolio-name", "0/950"}}
	if len(rows) != 3 {
		t.Fatalf("limits status rows: %v", rows)
	}
	for _, row := range rows {
		w := want[row["ACCOUNT"]]
		day := "2026-11-30#1"
		if row["ACCOUNT"] == "(reach 24h)" {
			day = "-"
		}
		if row["PORTFOLIO"] != w[0] || row["USED/CAP"] != w[1] || row["QUOTA DAY"] != day {
			t.Errorf("row %v, want portfolio %s, used %s", row, w[0], w[1])
		}
	}

	// On an 80-column terminal the table fits.
	c.tty, c.width = true, 80
	for i, line := range strings.Split(strings.TrimSuffix(c.ok("limits", "status"), "\n"), "\n") {
		if w := runewidth.StringWidth(line); w > 80 {
			t.Errorf("line %d is %d columns wide: %q", i+1, w, line)
		}
	}

	// Redis gone: an error naming it (password redacted), not a table.
	r.Kill()
	code, msg := c.exit("limits", "status")
	if code != ExitError || !strings.Contains(msg, "unavailable") || strings.Contains(msg, "s3cret") {
		t.Errorf("limits status with Redis down: exit %d\n%s", code, msg)
	}
}

// TestLimitsWrongURLWithoutAccounts: a database with no account yet (a new
// host, or --sandbox before its first run) still asks Redis, so a wrong
// port, password or database is an error, not an empty table and exit 0.
func TestLimitsWrongURLWithoutAccounts(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.emptyDB()
	for _, url := range []string{
		"redis://:s3cret@127.0.0.1:1/0",       // nobody listens
		"redis://:s3cret@" + r.Addr() + "/99", // no such database
	} {
		c.env["WASEND_LIMITS"] = url
		for _, args := range [][]string{{"limits", "status"}, {"quota", "reset", "--force"}} {
			code, msg := c.exit(args...)
			if code != ExitError || !strings.Contains(msg, "unavailable") || strings.Contains(msg, "s3cret") {
				t.Errorf("%s with %s and no accounts: exit %d\n%s", strings.Join(args, " "), url, code, msg)
			}
		}
	}
}

// TestLimitsStatusLostPortfolioHint: when one portfolio has no shared state
// (new, or its account just moved there) and another has, the hint names
// the lost portfolio's accounts: a plain forced reset would zero the other
// portfolio's counts, a second day of its caps.
func TestLimitsStatusLostPortfolioHint(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.addAccounts()
	c.ok("portfolio", "add", "acme", "--limit", "1000")
	c.ok("account", "set", "fresh-02", "--portfolio", "acme")
	c.env["WASEND_LIMITS"] = "redis://" + r.Addr() + "/0"
	c.ok("quota", "reset", "--force", "--account", "main-01")

	_, errOut, err := c.run("limits", "status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "portfolio acme:") || !strings.Contains(errOut, "`wasend quota reset --force --account fresh-02 --db "+c.db+"`") {
		t.Errorf("the hint does not name acme's account alone:\n%s", errOut)
	}
	if strings.Contains(errOut, "portfolio default:") {
		t.Errorf("the started portfolio is called lost:\n%s", errOut)
	}
	// Following the hint starts acme and leaves main-01's count alone.
	out := c.ok("quota", "reset", "--force", "--account", "fresh-02")
	if strings.Contains(out, "main-01") {
		t.Errorf("the reset touched main-01:\n%s", out)
	}
	if _, errOut, _ := c.run("limits", "status"); strings.Contains(errOut, "no shared state") {
		t.Errorf("still lost after the hinted reset:\n%s", errOut)
	}
}

// TestLimitsBadURLIsUsage: a limits URL that is not one (wrong scheme, not
// a URL, a database that is no number) is a usage error, exit 2, on every
// command that takes it — the suppression list's too — and never shows the
// password.
func TestLimitsBadURLIsUsage(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	for _, url := range []string{"http://:s3cret@127.0.0.1:6379/0", "redis://:s3cret@[::1", "redis://:s3cret@127.0.0.1:6379/x"} {
		c.env["WASEND_LIMITS"] = url
		for _, args := range [][]string{
			{"limits", "status"}, {"quota", "reset"}, {"status"},
			{"suppress", "list"}, {"suppress", "add", "+4915123456789"}, {"suppress", "remove", "+4915123456789"},
		} {
			code, msg := c.exit(args...)
			if code != ExitUsage || strings.Contains(msg, "s3cret") || !strings.Contains(msg, "limits URL") {
				t.Errorf("%s with %s: exit %d, want %d\n%s", strings.Join(args, " "), url, code, ExitUsage, msg)
			}
		}
	}
}

// TestQuotaResetGoesOnPastALostPortfolio: the cron line's plain reset
// does every portfolio it can, then names the lost one with its exact
// command and exits 1.
func TestQuotaResetGoesOnPastALostPortfolio(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.addAccounts()
	c.ok("portfolio", "add", "acme", "--limit", "1000")
	c.ok("account", "set", "main-01", "--portfolio", "acme") // acme comes first
	c.env["WASEND_LIMITS"] = "redis://" + r.Addr() + "/0"
	c.ok("quota", "reset", "--force")
	if err := r.Client(t).Del(t.Context(), "wasend:{p:acme}:gen").Err(); err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(24 * time.Hour)
	for run := range 2 {
		out, errOut, err := c.run("quota", "reset")
		var msg bytes.Buffer
		if code := exitCode(err, &msg); code != ExitError {
			t.Errorf("run %d: exit %d, want %d", run, code, ExitError)
		}
		want := map[int]string{0: "fresh-02: shared quota day 2026-12-01#2 (was 0 on 2026-11-30#1)",
			1: "fresh-02: shared quota day 2026-12-01#2 already open, unchanged"}[run]
		if !strings.Contains(out, want) {
			t.Errorf("run %d: the portfolio after the lost one did not get its day (want %q):\n%s", run, want, out)
		}
		if !strings.Contains(errOut, "portfolio acme:") || !strings.Contains(errOut, "`wasend quota reset --force --account main-01 --db "+c.db+"`") ||
			!strings.Contains(msg.String(), "1 portfolio(s)") {
			t.Errorf("run %d: the lost portfolio is not named with its command:\n%s%s", run, errOut, msg.String())
		}
	}
}
