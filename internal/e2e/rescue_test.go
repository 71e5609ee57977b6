package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/statesql"
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

	// Kill the victim while it holds rows in flight. It is stopped first
	// and its rows read while it is stopped: a stopped process records no
	// answer, and the survivor sees its pid alive and rescues nothing, so
	// the rows read are exactly those it holds when it dies, however late
	// the kill comes. Rows answered before it stopped: continue it, again.
	pid := victim.Pid()
	held := func() []int64 { return heldBy(w, pid) }
	var orphans []int64
	var lastBeat int64 // the victim's last heartbeat, unix ns
	w.WaitFor(15*time.Second, "the victim to be stopped holding claimed rows", func() bool {
		if victim.Exited() {
			t.Fatalf("the victim ended before it held rows: %s", victim.Wait(t))
		}
		if len(held()) == 0 {
			return false
		}
		victim.Signal(t, syscall.SIGSTOP)
		w.WaitFor(15*time.Second, "the victim to stop", func() bool { return victim.Exited() || stopped(pid) })
		if orphans = held(); len(orphans) > 0 {
			lastBeat = heartbeatOf(w, pid)
			return true
		}
		victim.Signal(t, syscall.SIGCONT)
		return false
	})
	victim.Signal(t, syscall.SIGKILL)
	if r := victim.Wait(t); r.Signal != syscall.SIGKILL {
		t.Fatalf("the victim had already ended: %s", r)
	}

	r := survivor.Wait(t)
	if r.Code != 0 {
		t.Fatalf("survivor: %s", r)
	}
	if !strings.Contains(r.Stderr, "marked unknown") {
		t.Errorf("survivor did not say that rows became unknown\n%s", r.Stderr)
	}
	rows := w.Rows()
	state := map[int64]string{}
	for _, row := range rows {
		state[row.ID] = row.State
	}
	// Same host, pid gone: dead at once, not after the 30 s stale period
	// (runner.Options.Stale) of silence. Read from the times the processes
	// recorded, not the test's clock, which a loaded machine stretches.
	const stale = 30 * time.Second
	rescuedAt := updatedAt(w)
	for _, id := range orphans {
		if state[id] != "unknown" {
			t.Errorf("row %d, in flight in the killed process: %s, want unknown", id, state[id])
		} else if d := time.Duration(rescuedAt[id] - lastBeat); d >= stale {
			t.Errorf("row %d became unknown %v after the killed process's last heartbeat; want before the %v stale period", id, d, stale)
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
	w.Query(`SELECT id FROM messages WHERE state = 'sending' AND runner_id LIKE ? AND `+statesql.Started("messages", true), func(rs *sql.Rows) error {
		var id int64
		err := rs.Scan(&id)
		ids = append(ids, id)
		return err
	}, fmt.Sprintf("%%/%d/%%", pid))
	return ids
}

// heartbeatOf is the last heartbeat (unix ns) of process pid's runner.
func heartbeatOf(w *world, pid int) int64 {
	var at int64
	w.Query(`SELECT coalesce(max(heartbeat_at), 0) FROM runners WHERE pid = ?`, func(rs *sql.Rows) error {
		return rs.Scan(&at)
	}, pid)
	if at == 0 {
		w.T.Fatalf("no runner of process %d", pid)
	}
	return at
}

// updatedAt is every message's last change (unix ns) by id.
func updatedAt(w *world) map[int64]int64 {
	at := map[int64]int64{}
	w.Query(`SELECT id, coalesce(updated_at, 0) FROM messages`, func(rs *sql.Rows) error {
		var id, ns int64
		err := rs.Scan(&id, &ns)
		at[id] = ns
		return err
	})
	return at
}

// stopped reports whether every thread of process pid is stopped (state T
// in /proc): it runs no more code until continued or killed. False once
// the process is gone.
func stopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// pid (comm) state …: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || (stat[i+2] != 'T' && stat[i+2] != 't') {
			return false
		}
	}
	return true
}
