package cmd

import (
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/limits/redistest"
)

// TestSharedTokensInStatus: under --limits the accounts' tokens are the
// buckets in Redis that every host takes from; status and account list
// say so (SHARED TOKENS, tokens_shared) and show Redis's figure, or "-"
// with the reason while Redis holds none — never this database's own
// bucket, which claims do not use then.
func TestSharedTokensInStatus(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.addAccounts()
	// main-01's burst grows: this database's bucket still holds the 15
	// tokens it had, Redis's starts full at 30.
	c.ok("account", "set", "main-01", "--burst", "30")
	if local := c.table("account", "list"); local[0]["TOKENS"] != "15.0" {
		t.Fatalf("account list without --limits: %v, want 15.0 TOKENS", local[0])
	}

	c.env["WASEND_LIMITS"] = "redis://" + r.Addr() + "/0"
	// A Redis that holds nothing yet: no figure, and why.
	_, errOut, err := c.run("status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "shared between hosts through Redis") || !strings.Contains(errOut, "holds no state for portfolio default") {
		t.Errorf("status on an empty Redis does not say why the tokens are missing:\n%s", errOut)
	}
	for _, row := range c.table("account", "list") {
		if row["SHARED TOKENS"] != "-" {
			t.Errorf("account list on an empty Redis: %s shows shared tokens %q, want -", row["NAME"], row["SHARED TOKENS"])
		}
	}

	c.ok("quota", "reset", "--force")
	rows := c.table("account", "list")
	for _, row := range rows {
		want := map[string]string{"main-01": "30.0", "fresh-02": "5.0"}[row["NAME"]]
		if row["SHARED TOKENS"] != want {
			t.Errorf("account list under --limits: %s shared tokens %q, want %s (Redis's bucket)", row["NAME"], row["SHARED TOKENS"], want)
		}
		if _, ok := row["TOKENS"]; ok {
			t.Errorf("account list under --limits still has a local TOKENS column: %v", row)
		}
	}
	s := c.status()
	for _, a := range s.Accounts {
		if !a.TokensShared {
			t.Errorf("status --json: %s tokens_shared false under --limits", a.Name)
		}
	}

	// Redis gone: status still answers, without figures, and says why.
	r.Kill()
	_, errOut, err = c.run("status")
	if err != nil {
		t.Fatalf("status with Redis down: %v", err)
	}
	if !strings.Contains(errOut, "did not answer") {
		t.Errorf("status with Redis down does not say the shared tokens are missing:\n%s", errOut)
	}
}

// TestLimitsStatusSaysWhyItIsEmpty: limits status for a database without
// accounts says so, and what to do, on a terminal and piped (on stderr, so
// stdout stays the records); a portfolio Redis holds nothing for shows no
// figures rather than a full bucket.
func TestLimitsStatusSaysWhyItIsEmpty(t *testing.T) {
	r := redistest.Start(t)
	c := newCLI(t)
	c.emptyDB()
	c.env["WASEND_LIMITS"] = "redis://" + r.Addr() + "/0"
	out, errOut, err := c.run("limits", "status")
	if err != nil || out != "" || !strings.Contains(errOut, "no accounts in database "+c.db) || !strings.Contains(errOut, "wasend account add") {
		t.Errorf("piped limits status without accounts: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	c.tty = true
	if out := c.ok("limits", "status"); !strings.Contains(out, "no accounts in database") {
		t.Errorf("limits status on a terminal without accounts:\n%s", out)
	}
	c.tty = false

	c.addAccounts()
	for _, row := range c.table("limits", "status") {
		if !strings.HasPrefix(row["USED/CAP"], "-/") || !strings.HasPrefix(row["TOKENS/BURST"], "-/") {
			t.Errorf("a portfolio Redis holds nothing for: %v, want no used count and no tokens", row)
		}
	}
}
