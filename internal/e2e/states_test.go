package e2e

import (
	"database/sql"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestDoubleCtrlCIsInterruptedAtOnce: after a double Ctrl-C the process
// exits at once, its runner still registered with a fresh heartbeat. On
// its machine list, show, status and shell completion all say interrupted
// right away — the pid is gone — not "running" until the heartbeat ages.
func TestDoubleCtrlCIsInterruptedAtOnce(t *testing.T) {
	w := newWorld(t, sandbox.Options{
		PairInterval: -1,
		Faults:       sandbox.Faults{Seed: 7, Slow: 0.5, SlowDelay: 2 * time.Second},
	})
	w.OK("tier", "set", "active", "--rate", "40", "--burst", "5", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000003", "active"})
	csv := w.WriteCSV("ctrlc.csv", 4915112380000, 200)
	p := w.Start("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	w.WaitFor(10*time.Second, "10 messages sent", func() bool { return testproc.States(w.Rows())["sent"] >= 10 })
	if got := w.campaigns()[0].State; got != "running" {
		t.Fatalf("while it sends: campaign list says %q, want running", got)
	}
	p.Signal(t, syscall.SIGINT)
	time.Sleep(50 * time.Millisecond)
	p.Signal(t, syscall.SIGINT)
	r := p.Wait(t)
	if r.Code != 130 || !strings.Contains(r.Stderr, "quit:") {
		t.Fatalf("after a double Ctrl-C: want exit 130 and the quit line\n%s", r)
	}
	runners := 0
	w.Query(`SELECT count(*) FROM runners`, func(rows *sql.Rows) error { return rows.Scan(&runners) })
	if runners == 0 {
		t.Fatal("the runner unregistered before it died: the test proves nothing")
	}

	if got := w.campaigns()[0].State; got != "interrupted" {
		t.Errorf("campaign list --json right after: %q, want interrupted", got)
	}
	var show struct {
		State string `json:"state"`
	}
	if out := w.OK("campaign", "show", "1", "--json").Stdout; json.Unmarshal([]byte(out), &show) != nil || show.State != "interrupted" {
		t.Errorf("campaign show --json right after: %q, want interrupted\n%s", show.State, out)
	}
	var status struct {
		Campaigns []struct {
			State string `json:"state"`
		} `json:"campaigns"`
	}
	if out := w.OK("status", "--json").Stdout; json.Unmarshal([]byte(out), &status) != nil || len(status.Campaigns) != 1 || status.Campaigns[0].State != "interrupted" {
		t.Errorf("status --json right after: %+v, want interrupted\n%s", status.Campaigns, out)
	}
	if out := w.OK("campaign", "list").Stdout; !strings.Contains(out, "interrupted") || strings.Contains(out, "running") {
		t.Errorf("campaign list right after: want interrupted\n%s", out)
	}
	if out := w.OK("__complete", "campaign", "show", "").Stdout; !strings.Contains(out, "ctrlc.csv (interrupted)") {
		t.Errorf("completion right after: want the campaign described as interrupted\n%s", out)
	}
}
