package e2e

import (
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestParamMismatchPausesAtFirstRequest: a template whose parameters do
// not match the rows (132000, true of every row) costs one request, not
// a window of them or the error-ratio sample: the campaign pauses (exit 4)
// naming the code and the fix, and the row that was tried stays pending.
// Once the template matches, `campaign resume` sends every row once.
func TestParamMismatchPausesAtFirstRequest(t *testing.T) {
	const n = 60
	w := newSwapWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{CodeProb: map[int]float64{132000: 1}}})
	w.fastTiers("500", "200")
	w.addAccounts(account{"one", "100000000000061", "active"}, account{"two", "100000000000062", "active"})
	csv := w.WriteCSV("params.csv", 4915112500000, n)

	r := w.Run(templateRun(csv, sandbox.DemoTemplate)...)
	if r.Code != 4 {
		t.Fatalf("run with a parameter-count mismatch: want exit 4 (paused)\n%s", r)
	}
	if recs := w.api.Records(); len(recs) != 1 || recs[0].Code != 132000 {
		t.Fatalf("%d requests before the pause, want exactly one answered 132000", len(recs))
	}
	for _, want := range []string{"132000", sandbox.DemoTemplate, "campaign resume 1"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr should name %q\n%s", want, r.Stderr)
		}
	}
	if got := testproc.States(w.Rows()); got["pending"] != n {
		t.Errorf("after the pause: rows %v, want all %d pending (the one tried put back)", got, n)
	}
	c := w.status()
	if len(c) != 1 || c[0].State != "paused" || !strings.Contains(c[0].PauseReason, "132000") ||
		!strings.Contains(c[0].PauseReason, "fix") {
		t.Fatalf("status: want campaign 1 paused with a reason naming 132000 and the fix, got %+v", c)
	}
	if f := w.failed("1"); len(f) > 0 {
		t.Errorf("a template error failed rows: %+v", f)
	}

	// The template fits the rows now.
	w.swap(sandbox.Options{PairInterval: -1})
	w.OK(append([]string{"campaign", "resume", "1"}, fastFailureFlags...)...)
	rows := w.Rows()
	if got := testproc.States(rows); got["sent"] != n {
		t.Errorf("after resume: rows %v, want all %d sent", got, n)
	}
	recs := w.api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
}
