package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestEndingRunRescuesKilledRows: a run killed with SIGKILL holds rows in
// flight; the next run, started at once, finds nothing it may send (the
// daily cap is used up) and stops. Before it stops it waits out the killed
// run's heartbeat and turns its rows unknown, instead of leaving them in
// flight until a run a day later.
func TestEndingRunRescuesKilledRows(t *testing.T) {
	const (
		n   = 8
		cap = 4
	)
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{Slow: 1, SlowDelay: 3 * time.Second}})
	w.addAccounts(account{"main", "100000000000071", "active"})
	w.OK("account", "set", "main", "--rate", "100", "--burst", "20", "--daily-cap", fmt.Sprint(cap))
	csv := w.WriteCSV("killed.csv", 4915112600000, n)
	w.OK("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	victim := w.Start("campaign", "run", "--resume", "1", "--workers", "4")
	pid := victim.Pid()
	held := func() []int64 { return heldBy(w, pid) }
	// The first request goes alone; once it is answered, the rest of the
	// day's quota goes out in one window, and is answered seconds later.
	w.WaitFor(15*time.Second, "the victim to hold the day's quota in flight", func() bool { return len(held()) == cap-1 })
	victim.Signal(t, syscall.SIGKILL)
	if r := victim.Wait(t); r.Signal != syscall.SIGKILL {
		t.Fatalf("the victim had already ended: %s", r)
	}
	orphans := held()

	r := w.Run("campaign", "run", "--resume", "1", "--stop-when-capped")
	if r.Code != 3 {
		t.Fatalf("the next run: want exit 3 (capped)\n%s", r)
	}
	state := map[int64]string{}
	for _, row := range w.Rows() {
		state[row.ID] = row.State
	}
	for _, id := range orphans {
		if state[id] != "unknown" {
			t.Errorf("row %d, in flight in the killed run: %s after the next run ended, want unknown", id, state[id])
		}
	}
}
