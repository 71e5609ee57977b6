package e2e

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestOutagePausesWithExit6: the Cloud API goes away mid-campaign (its port
// closes). wasend stops claiming, waits and probes, and after
// --outage-timeout pauses the campaign with exit 6; no row is failed. When
// the API is back, `campaign resume` sends the rest.
func TestOutagePausesWithExit6(t *testing.T) {
	api := sandbox.New(sandbox.Options{PairInterval: -1})
	ts := httptest.NewServer(api)
	addr := ts.Listener.Addr().String()
	w := worldAt(t, api, ts.URL)
	w.addAccounts(account{"one", "100000000000101", "active"}, account{"two", "100000000000102", "active"})
	for _, a := range []string{"one", "two"} {
		w.OK("account", "set", a, "--rate", "5", "--burst", "1", "--daily-cap", "100000")
	}
	const n = 60
	csv := w.WriteCSV("outage.csv", 4915112410000, n)
	p := w.Start("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name",
		"--outage-timeout", "4s", "--backoff-base", "200ms")
	w.WaitFor(15*time.Second, "a few messages sent", func() bool { return testproc.States(w.Rows())["sent"] >= 5 })
	ts.Close() // connections refused from now on
	r := p.Wait(t)
	if r.Code != 6 || !strings.Contains(r.Stderr, "Cloud API outage") {
		t.Fatalf("want exit 6 with the outage explained\n%s", r)
	}
	got := testproc.States(w.Rows())
	if got["failed"] != 0 || got["sent"] == 0 || got["pending"] == 0 {
		t.Errorf("rows %v: want some sent, the rest pending, none failed", got)
	}
	if c := w.status(); len(c) != 1 || c[0].State != "paused" || !strings.Contains(c[0].PauseReason, "Cloud API outage") {
		t.Errorf("status %+v: want the campaign paused for the outage", c)
	}

	// The API is back on the same address.
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	back := httptest.NewUnstartedServer(api)
	back.Listener.Close()
	back.Listener = l
	back.Start()
	t.Cleanup(back.Close)
	for _, a := range []string{"one", "two"} {
		w.OK("account", "set", a, "--rate", "100", "--burst", "20")
	}
	w.OK("campaign", "resume", "1")
	rows := w.Rows()
	if got := testproc.States(rows); got["sent"]+got["unknown"] != n || got["failed"] != 0 {
		t.Errorf("after resume: rows %v, want all %d sent (or unknown: in flight when the port closed)", got, n)
	}
	recs := api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
}
