package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestPriorityAcrossProcesses: a low-priority campaign sends from one
// process; a high-priority one started from another process takes every
// token of the shared account until it is done, and the low one then
// finishes. Judged from the claims both processes recorded.
func TestPriorityAcrossProcesses(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.OK("tier", "set", "active", "--rate", "20", "--burst", "2", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000005", "active"})
	lowCSV := w.WriteCSV("low.csv", 4915112380000, 300)
	highCSV := w.WriteCSV("high.csv", 4915112390000, 60)
	run := func(csv string, extra ...string) []string {
		return append([]string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}, extra...)
	}

	low := w.Start(run(lowCSV, "--priority", "low")...)
	w.WaitFor(10*time.Second, "20 low messages sent", func() bool { return testproc.States(w.Rows())["sent"] >= 20 })
	high := w.Start(run(highCSV, "--priority", "high")...)
	if r := high.Wait(t); r.Code != 0 {
		t.Fatalf("high run: %s", r)
	}
	if r := low.Wait(t); r.Code != 0 {
		t.Fatalf("low run: %s", r)
	}

	var hf, hl time.Time
	var lows []time.Time
	for _, c := range w.Claims() {
		switch {
		case strings.HasPrefix(c.CallbackData, "wasend:c2:"):
			if hf.IsZero() {
				hf = c.At
			}
			hl = c.At
		case strings.HasPrefix(c.CallbackData, "wasend:c1:"):
			lows = append(lows, c.At)
		}
	}
	var during, before, after int
	for _, at := range lows {
		switch {
		case at.After(hf) && at.Before(hl):
			during++
		case !at.After(hf):
			before++
		default:
			after++
		}
	}
	t.Logf("high sent from %v for %v; low claims: %d before, %d during, %d after",
		hf.Format("15:04:05.000"), hl.Sub(hf).Round(time.Millisecond), before, during, after)
	if during > 0 {
		t.Errorf("the low campaign took %d tokens while the high one had rows to send", during)
	}
	if before < 20 || after == 0 || before+after != 300 {
		t.Errorf("low claims: %d before the high campaign, %d after; want it started first and finished after", before, after)
	}
	// 60 messages at 20/s with a burst of 2 (and up to 2 s of the rate
	// borrowed): about 3 s, not shared.
	if d := hl.Sub(hf); d > 4*time.Second {
		t.Errorf("the high campaign took %v for 60 messages at 20/s: it did not get every token", d)
	}
	rows := w.Rows()
	if got := testproc.States(rows); got["sent"] != 360 {
		t.Errorf("rows %v, want 360 sent", got)
	}
	checkNoDuplicates(t, w.api.Records())
}
