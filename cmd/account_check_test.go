package cmd

import (
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestPreflightFindingShown: a run whose preflight finds fresh-02's token
// expired leaves it out and says so where the operator looks: the accounts
// table's state and last error, a warning with the API's reason, and
// status --json — never the token. A check that passes clears it.
func TestPreflightFindingShown(t *testing.T) {
	const expired = "EAAG-SECRET-expired-9f2c"
	c, _ := preflightCLI(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{BadTokens: []string{expired}}}, nil)
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "EAAG-SECRET-good-1a2b", expired
	if _, errOut, err := c.run("campaign", "run", writePreflightList(t, "promo.csv", 0, 2), "--text", "hi", "--ignore-window"); err != nil {
		t.Fatalf("run with fresh-02's token expired: %v\n%s", err, errOut)
	}

	rows := c.table("account", "list")
	byName := map[string]map[string]string{}
	for _, r := range rows {
		byName[r["NAME"]] = r
	}
	if got := byName["fresh-02"]; got["STATE"] != "failed its check" || got["LAST ERROR"] != "190" {
		t.Errorf("account list, fresh-02: state %q, last error %q; want failed its check, 190", got["STATE"], got["LAST ERROR"])
	}
	if got := byName["main-01"]; got["STATE"] != "ok" || got["LAST ERROR"] != "" {
		t.Errorf("account list, main-01: state %q, last error %q; want ok and none", got["STATE"], got["LAST ERROR"])
	}
	out, errOut, err := c.run("status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "account fresh-02 failed its check at 2026-11-30 14:00:00") || !strings.Contains(errOut, "190") ||
		!strings.Contains(errOut, "wasend account test fresh-02 --db "+c.db) {
		t.Errorf("status: no warning with fresh-02's finding and the command that checks it again:\n%s", errOut)
	}
	if strings.Contains(out+errOut, "EAAG-SECRET") {
		t.Errorf("status shows a token:\n%s%s", out, errOut)
	}
	s := c.status()
	var found bool
	for _, a := range s.Accounts {
		switch {
		case a.Name == "fresh-02":
			found = true
			if a.State != "failed its check" || a.CheckFailed == nil || a.CheckFailed.Code != 190 || a.CheckFailed.Error == "" || a.LastErrorCode != 190 {
				t.Errorf("status --json, fresh-02: state %q, check_failed %+v, last error %d", a.State, a.CheckFailed, a.LastErrorCode)
			}
		case a.CheckFailed != nil:
			t.Errorf("status --json, %s: check_failed %+v, want none", a.Name, a.CheckFailed)
		}
	}
	if !found {
		t.Fatal("status --json: no fresh-02")
	}
	if js := c.ok("status", "--json"); strings.Contains(js, "EAAG-SECRET") {
		t.Errorf("status --json shows a token:\n%s", js)
	}

	// A new token passes `account test`: the finding is gone.
	c.env["WA_TOKEN_FRESH"] = "EAAG-SECRET-renewed-77aa"
	c.ok("account", "test", "fresh-02")
	for _, r := range c.table("account", "list") {
		if r["NAME"] == "fresh-02" && (r["STATE"] != "ok" || r["LAST ERROR"] != "") {
			t.Errorf("after a passing check: fresh-02 state %q, last error %q; want ok and none", r["STATE"], r["LAST ERROR"])
		}
	}
}
