//go:build torture

package torture

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
)

// TestFaultStorm runs one campaign through 10 % throttling (130429), 5 %
// server errors (131000), 2 % dropped connections, 1 % answers slower than
// the client's timeout, and an account answering 190 after its 50th
// message. Pass: the campaign finishes; no silent loss (every row sent,
// failed or unknown, and every recipient the server accepted is sent or
// unknown); throttling spent no retry budget.
func TestFaultStorm(t *testing.T) {
	var (
		n      = size(400, 2000)
		lim    = limit{rate: 100, burst: 10}
		doomed = threeAccounts[2].phoneNumberID
	)
	seed := testSeed(t)
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed),
		"--throttle", "0.10", "--server-error", "0.05", "--drop", "0.02",
		// --slow 0.02: at 0.01 one short run in ~120 drew no slow request
		// at all (0.99^474) and failed the every-fault check below.
		"--slow", "0.02", "--slow-delay", "2s", "--fatal-account", doomed+"=190@50")
	w.setup(lim.rate, lim.burst, 100000, threeAccounts)
	csv := w.WriteCSV("storm.csv", 4915112380000, n)

	start := time.Now()
	r := w.Run(runArgs(csv, "--timeout", "500ms")...)
	elapsed := time.Since(start)
	checkOutput(t, "campaign run", r)
	if r.Code != 0 || !strings.Contains(r.Stdout, "finished") {
		t.Fatalf("campaign run under a fault storm: want exit 0 and finished\n%s", r)
	}

	recs := w.api.Records(t)
	rows := w.Rows()
	if len(rows) != n {
		t.Fatalf("campaign holds %d rows, want %d", len(rows), n)
	}
	outcomes := map[string]int{}
	codes := map[int]int{}
	for _, rec := range recs {
		outcomes[rec.Outcome]++
		codes[rec.Code]++
	}
	t.Logf("server: %d requests, outcomes %v, codes %v; rows %v", len(recs), outcomes, codes, testproc.States(rows))
	if codes[130429] == 0 || codes[131000] == 0 || codes[190] == 0 || outcomes["dropped"] == 0 || outcomes["slow"] == 0 {
		t.Errorf("the storm lacked a fault (outcomes %v, codes %v); the test proved less than it claims", outcomes, codes)
	}
	f := judge(t, rows, recs, false)
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	if f.sent+f.failed+f.unknown != n {
		t.Errorf("sent %d + failed %d + unknown %d ≠ %d rows", f.sent, f.failed, f.unknown, n)
	}
	if got := acceptedBy(recs)[doomed]; got > 50 {
		t.Errorf("the doomed account had %d messages accepted, at most 50 possible", got)
	}

	// Throttling is free: a row whose only failed attempts were throttled
	// used no retry budget; and only transient answers ever spend it (the
	// last one of a row that gave up failed the row instead).
	classes := w.AttemptClasses()
	onlyThrottled, budgetBreaches := 0, 0
	for _, m := range rows {
		throttled, transient, other := 0, 0, 0
		for _, c := range classes[m.ID] {
			switch c {
			case "ok":
			case "throttled":
				throttled++
			case "transient":
				transient++
			default:
				other++
			}
		}
		if throttled > 0 && transient == 0 && other == 0 {
			onlyThrottled++
			if m.Retries != 0 {
				budgetBreaches++
				t.Errorf("%s: its only failed attempts were %d throttles, yet retries = %d (attempts %v)",
					m.Phone, throttled, m.Retries, classes[m.ID])
			}
		}
		want := transient
		if m.State == "failed" && strings.HasPrefix(m.ErrorMessage, "gave up after") {
			want--
		}
		if m.Retries != want && !(throttled > 0 && transient == 0 && other == 0) {
			budgetBreaches++
			t.Errorf("%s (%s): retries %d, want %d from its attempts %v", m.Phone, m.State, m.Retries, want, classes[m.ID])
		}
	}
	if onlyThrottled == 0 {
		t.Error("no row was throttled without other errors; the budget check proved nothing")
	}
	report(t, "faults", f, fmt.Sprintf("throttled_only_rows=%d budget_breaches=%d outcomes=%v codes=%v elapsed=%v",
		onlyThrottled, budgetBreaches, outcomes, codes, elapsed.Round(time.Millisecond)))
}
