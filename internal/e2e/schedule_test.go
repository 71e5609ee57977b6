package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestScheduledRunWaits: `campaign run --at +3s` imports at once, shows as
// scheduled to another process, claims nothing before its start, then
// sends everything.
func TestScheduledRunWaits(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.OK("tier", "set", "active", "--rate", "50", "--burst", "5", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000005", "active"})
	const n = 30
	csv := w.WriteCSV("later.csv", 4915112380000, n)
	const delay = 3 * time.Second
	before := time.Now()
	p := w.Start("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--at", "+3s")

	w.WaitFor(5*time.Second, "the campaign imported", func() bool { return len(w.campaigns()) == 1 })
	if c := w.campaigns()[0]; c.State != "scheduled" && time.Since(before) < delay {
		t.Errorf("before its start the campaign shows as %q, want scheduled", c.State)
	}
	r := p.Wait(t)
	if r.Code != 0 {
		t.Fatalf("scheduled run: %s", r)
	}
	if !strings.Contains(r.Stderr, "scheduled: starts at") && !strings.Contains(r.Stdout, "scheduled: starts at") {
		t.Errorf("the run does not say it waits for its start:\n%s", r)
	}
	claims := w.Claims()
	if len(claims) != n {
		t.Fatalf("%d claims, want %d", len(claims), n)
	}
	for _, c := range claims {
		if c.At.Before(before.Add(delay)) {
			t.Errorf("claim at %v, before the start (no earlier than %v)", c.At, before.Add(delay))
		}
	}
	if got := testproc.States(w.Rows()); got["sent"] != n {
		t.Errorf("rows %v, want %d sent", got, n)
	}
	if c := w.campaigns()[0]; c.State != "finished" {
		t.Errorf("after the run: %q, want finished", c.State)
	}
}
