package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestInterruptSIGINT stops a run with SIGINT while requests are in
// flight: it must wait for their answers, record them, exit 130 and say
// how to continue; running the same command again finishes the campaign
// without messaging anyone twice.
func TestInterruptSIGINT(t *testing.T) {
	const slowDelay = 400 * time.Millisecond
	w := newWorld(t, sandbox.Options{
		PairInterval: -1,
		Faults:       sandbox.Faults{Seed: 7, Slow: 0.5, SlowDelay: slowDelay},
	})
	w.OK("tier", "set", "active", "--rate", "40", "--burst", "5", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000003", "active"}, account{"second", "100000000000004", "active"})
	const n = 150
	csv := w.WriteCSV("interrupt.csv", 4915112370000, n)
	run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}

	p := w.Start(run...)
	w.WaitFor(10*time.Second, "20 messages sent", func() bool { return testproc.States(w.Rows())["sent"] >= 20 })
	signalled := time.Now()
	p.Signal(t, syscall.SIGINT)
	r := p.Wait(t)
	if r.Code != 130 {
		t.Fatalf("after SIGINT: want exit 130\n%s", r)
	}
	if !strings.Contains(r.Stderr, "To continue, run the same command again") {
		t.Errorf("after SIGINT: stderr does not say how to continue\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stdout, "interrupted") {
		t.Errorf("after SIGINT: want an interrupted summary on stdout\n%s", r.Stdout)
	}
	after := testproc.States(w.Rows())
	t.Logf("after SIGINT: rows %v", after)
	if after["sending"] > 0 {
		t.Errorf("after SIGINT: %d rows left sending", after["sending"])
	}
	// Every answer came well within the drain time, so none is unknown.
	if after["unknown"] > 0 {
		t.Errorf("after SIGINT: %d rows unknown although every answer arrived", after["unknown"])
	}
	if after["pending"] == 0 {
		t.Fatal("SIGINT came after the campaign ended; the test proved nothing")
	}
	// A slow request accepted less than SlowDelay before the signal was
	// still waiting for its answer when the signal came.
	inFlight := 0
	for _, rec := range w.api.Records() {
		if rec.Outcome == sandbox.OutcomeSlow && rec.At.Before(signalled) && signalled.Sub(rec.At) < slowDelay {
			inFlight++
		}
	}
	if inFlight == 0 {
		t.Fatal("no request was in flight at SIGINT; the test proved nothing")
	}
	t.Logf("%d slow requests in flight at SIGINT", inFlight)

	w.OK(run...)
	recs := w.api.Records()
	rows := w.Rows()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
	if _, unsent := matchClaims(t, recs, w.Claims()); len(unsent) > 0 {
		t.Errorf("%d tokens taken for requests that never reached the server, e.g. %+v", len(unsent), unsent[0])
	}
	if got := testproc.States(rows); got["sent"] != n {
		t.Errorf("after the second run: rows %v, want all %d sent", got, n)
	}
}
