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

// TestExpireAfterEndsTheRun: with a validity of 2 s at 5 messages a second,
// the rows not sent by then expire, the run finishes and says so, and the
// server saw no request after the deadline.
func TestExpireAfterEndsTheRun(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.OK("tier", "set", "active", "--rate", "5", "--burst", "1", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000005", "active"})
	const n = 40
	csv := w.WriteCSV("flash.csv", 4915112380000, n)
	r := w.Run("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--expire-after", "2s")
	if r.Code != 0 {
		t.Fatalf("run: %s", r)
	}
	states := testproc.States(w.Rows())
	if states["sent"] == 0 || states["expired"] == 0 || states["sent"]+states["expired"] != n {
		t.Fatalf("rows %v, want some sent and the rest expired", states)
	}
	if !strings.Contains(r.Stderr, "message(s) expired: not sent within 2s of the start") {
		t.Errorf("the run does not say rows expired:\n%s", r)
	}
	claims := w.Claims()
	for _, c := range claims[1:] {
		if c.At.Sub(claims[0].At) > 2*time.Second {
			t.Errorf("claim at %v, %v after the first: past the validity", c.At, c.At.Sub(claims[0].At))
		}
	}
	if c := w.campaigns()[0]; c.State != "finished" {
		t.Errorf("campaign %+v, want finished", c)
	}
	t.Logf("rows %v", states)
}
