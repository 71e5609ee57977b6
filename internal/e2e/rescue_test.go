package e2e

import (
	"database/sql"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestSurvivorRescuesDeadProcessRows: two processes send one campaign and
// one is killed with SIGKILL while it holds claimed rows. The survivor must
// send everything else, turn the dead one's rows unknown and finish — not
// wait forever for requests that no process will ever answer.
func TestSurvivorRescuesDeadProcessRows(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{Slow: 1, SlowDelay: 1200 * time.Millisecond}})
	w.addAccounts(account{"main", "100000000000021", "active"})
	w.OK("account", "set", "main", "--rate", "100", "--burst", "20", "--daily-cap", "100000")
	const n = 40
	csv := w.WriteCSV("two.csv", 4915112370000, n)
	w.OK("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	run := []string{"campaign", "run", "--resume", "1", "--workers", "4"}
	victim := w.Start(run...)
	survivor := w.Start(run...)

	// Kill the victim once it holds rows in flight.
	pid := victim.Pid()
	held := func() []int64 { return heldBy(w, pid) }
	w.WaitFor(15*time.Second, "the victim to hold claimed rows", func() bool { return len(held()) > 0 })
	victim.Signal(t, syscall.SIGKILL)
	killedAt := time.Now()
	if r := victim.Wait(t); r.Signal != syscall.SIGKILL {
		t.Fatalf("the victim had already ended: %s", r)
	}
	orphans := held()
	if len(orphans) == 0 {
		t.Fatal("the victim held no rows when it died; the test proved nothing")
	}

	r := survivor.Wait(t)
	took := time.Since(killedAt)
	if r.Code != 0 {
		t.Fatalf("survivor: %s", r)
	}
	// Same host, pid gone: a few missed heartbeats, not the 30 s stale period.
	if took > 20*time.Second {
		t.Errorf("survivor finished %v after the kill; want well within the 30 s stale period", took)
	}
	if !strings.Contains(r.Stderr, "marked unknown") {
		t.Errorf("survivor did not say that rows became unknown\n%s", r.Stderr)
	}
	rows := w.Rows()
	state := map[int64]string{}
	for _, row := range rows {
		state[row.ID] = row.State
	}
	for _, id := range orphans {
		if state[id] != "unknown" {
			t.Errorf("row %d, in flight in the killed process: %s, want unknown", id, state[id])
		}
	}
	if c := w.campaigns(); len(c) != 1 || c[0].State != "finished" || c[0].Sent+c[0].Unknown != n || c[0].Unknown < len(orphans) {
		t.Errorf("campaigns %+v, want one finished: %d sent or unknown, at least %d unknown", c, n, len(orphans))
	}
	recs := w.api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
}

// heldBy lists the rows process pid holds in flight, their requests
// started (its runner id carries its pid): a row it claimed and never
// started goes back to pending when it dies.
func heldBy(w *world, pid int) []int64 {
	var ids []int64
	w.Query(`SELECT id FROM messages WHERE state = 'sending' AND started = 1 AND runner_id LIKE ?`, func(rs *sql.Rows) error {
		var id int64
		err := rs.Scan(&id)
		ids = append(ids, id)
		return err
	}, fmt.Sprintf("%%/%d/%%", pid))
	return ids
}
