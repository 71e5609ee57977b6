package cmd

import (
	"strings"
	"testing"
)

func TestAccountAutoTierAndHistory(t *testing.T) {
	c := newCLI(t)
	c.ok("account", "add", "fresh", "--phone-number-id", "111", "--tier", "new", "--token-env", "T")
	c.ok("account", "add", "manual", "--phone-number-id", "222", "--tier", "warm", "--token-env", "T", "--auto-tier=false")
	s := c.status()
	for _, a := range s.Accounts {
		switch a.Name {
		case "fresh":
			if a.TierProgress == nil || a.TierProgress.Next != "warm" || a.TierProgress.DaysNeeded != 7 {
				t.Errorf("fresh: progress %+v", a.TierProgress)
			}
		case "manual":
			if a.TierProgress != nil {
				t.Errorf("manual: progress %+v, want none", a.TierProgress)
			}
		}
	}
	c.ok("account", "set", "fresh", "--promote-after", "72h")
	c.ok("account", "set", "fresh", "--tier", "warm")
	c.ok("account", "set", "fresh", "--auto-tier=false")
	out, errOut, err := c.run("account", "history", "fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"added, auto-tier on", "new\twarm\tset by the operator", "auto-tier off"} {
		if !strings.Contains(out, want) {
			t.Errorf("history does not say %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "auto-tier is off") {
		t.Errorf("history's note: %q", errOut)
	}
	if msg := c.usage("account", "set", "fresh", "--promote-after", "0s"); !strings.Contains(msg, "--promote-after 0s: must be more than zero") {
		t.Errorf("--promote-after 0s: %q", msg)
	}
	if code, msg := c.exit("account", "history", "nobody"); code == 0 || !strings.Contains(msg, `account "nobody"`) {
		t.Errorf("history of an unknown account: %d %q", code, msg)
	}
}
