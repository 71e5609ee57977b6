package cmd

import (
	"strings"
	"testing"
)

// When every account is capped, the advice is true: a plain `quota reset`
// does nothing on the day it ran, so the message names when the next quota
// day opens and the --force that opens one now.
func TestCappedHint(t *testing.T) {
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--daily-cap", "1")
	}
	_, errOut, err := c.run("campaign", "run", "--sandbox", "--stop-when-capped", "../testdata/recipients.csv")
	if code := exitCode(err, &strings.Builder{}); code != ExitCapped {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, ExitCapped, errOut)
	}
	for _, want := range []string{"The next quota day opens from 12-01 00:00 UTC", "`wasend quota reset --force` opens one now",
		"wasend campaign run --resume 1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "It continues after `wasend quota reset`") {
		t.Errorf("the untrue hint is back:\n%s", errOut)
	}
}
