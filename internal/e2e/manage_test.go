package e2e

import (
	"github.com/wasend/wasend/internal/testproc"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestPauseCancelFromAnotherProcess pauses or cancels a campaign from a
// second wasend process while the first is sending it, with slow answers
// in flight. The sender must stop claiming as soon as the command has
// returned, let the requests already made finish and record them, and exit
// within seconds with the state's exit code; a paused campaign then
// finishes after a resume, a cancelled one keeps its pending rows unsent.
func TestPauseCancelFromAnotherProcess(t *testing.T) {
	for _, tt := range []struct {
		verb     string
		wantCode int
		state    string
		why      string
	}{
		{"pause", 4, "paused", "stopped: campaign 1: campaign is paused: paused by the operator"},
		{"cancel", 7, "cancelled", "stopped: campaign 1: campaign was cancelled; its pending messages are not sent"},
	} {
		t.Run(tt.verb, func(t *testing.T) {
			const slowDelay = 300 * time.Millisecond
			w := newWorld(t, sandbox.Options{
				PairInterval: -1,
				Faults:       sandbox.Faults{Seed: 11, Slow: 0.5, SlowDelay: slowDelay},
			})
			w.OK("tier", "set", "active", "--rate", "30", "--burst", "5", "--daily-cap", "100000")
			w.addAccounts(account{"main", "100000000000005", "active"}, account{"second", "100000000000006", "active"})
			const n = 400
			csv := w.WriteCSV(tt.verb+".csv", 4915112380000, n)
			run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}

			p := w.Start(run...)
			w.WaitFor(10*time.Second, "20 messages sent", func() bool { return testproc.States(w.Rows())["sent"] >= 20 })
			w.OK("campaign", tt.verb, "1")
			stopped := time.Now()
			r := p.Wait(t)
			took := time.Since(stopped)
			if r.Code != tt.wantCode {
				t.Fatalf("run after %s from another process: want exit %d\n%s", tt.verb, tt.wantCode, r)
			}
			if took > 5*time.Second {
				t.Errorf("run took %v to stop after %s, want a few seconds at most", took, tt.verb)
			}
			if !strings.Contains(r.Stdout, tt.state) || !strings.Contains(r.Stderr, tt.why) {
				t.Errorf("output does not say %s and %q:\n%s", tt.state, tt.why, r)
			}
			t.Logf("stopped %v after %s", took, tt.verb)

			// Nothing claimed once the command had returned: requests that
			// reached the server afterwards were all claimed before.
			claims := w.Claims()
			for _, c := range claims {
				if c.At.After(stopped) {
					t.Errorf("claim at %v, after the %s returned at %v", c.At, tt.verb, stopped)
				}
			}
			recs := w.api.Records()
			checkNoDuplicates(t, recs)
			checkAgainstServer(t, w.Rows(), recs, true)
			matchClaims(t, recs, claims)
			after := testproc.States(w.Rows())
			t.Logf("after %s: rows %v, %d requests", tt.verb, after, len(recs))
			if after["sending"] > 0 || after["unknown"] > 0 {
				t.Errorf("after %s: %d rows sending and %d unknown, want every answer recorded", tt.verb, after["sending"], after["unknown"])
			}
			if after["pending"] == 0 {
				t.Fatalf("the %s came after the campaign ended; the test proved nothing", tt.verb)
			}
			camps := w.campaigns()
			if len(camps) != 1 || camps[0].State != tt.state || camps[0].Total != n || camps[0].Pending != after["pending"] {
				t.Errorf("campaign list after %s: %+v, want %s with its counts", tt.verb, camps, tt.state)
			}

			if tt.verb == "pause" {
				w.OK("campaign", "resume", "1")
				if got := testproc.States(w.Rows()); got["sent"] != n {
					t.Errorf("after resume: rows %v, want all %d sent", got, n)
				}
				checkNoDuplicates(t, w.api.Records())
				return
			}
			// Cancelled is final: running it again sends nothing.
			before := len(w.api.Records())
			if r := w.Run(run...); r.Code != 7 {
				t.Errorf("run of a cancelled campaign: want exit 7\n%s", r)
			}
			if got := len(w.api.Records()); got != before {
				t.Errorf("run of a cancelled campaign made %d requests", got-before)
			}
			if got := testproc.States(w.Rows()); got["pending"] != after["pending"] {
				t.Errorf("pending rows after re-running a cancelled campaign: %d, want %d kept", got["pending"], after["pending"])
			}
		})
	}
}
