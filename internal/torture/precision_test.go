//go:build torture

package torture

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestRatePrecision: three accounts with different rates send for a while
// (20 s short, 10 min full) with more recipients than they can reach. Pass,
// from the server's record: each account achieved at least 98 % of the
// ideal schedule (its burst plus its rate over the run) and no bucket was
// overdrawn by more than one token.
func TestRatePrecision(t *testing.T) {
	run := size(20*time.Second, 10*time.Minute)
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s")
	type tier struct {
		name string
		lim  limit
	}
	tiers := []tier{{"new", limit{2, 3}}, {"warm", limit{3, 4}}, {"active", limit{5, 5}}}
	for _, tr := range tiers {
		w.OK("tier", "set", tr.name, "--rate", fmt.Sprint(tr.lim.rate), "--burst", fmt.Sprint(tr.lim.burst), "--daily-cap", "1000000")
	}
	for i, a := range threeAccounts {
		w.OK("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", tiers[i].name, "--token-env", tokenEnv)
	}
	n := int(10*run.Seconds()) + 200 // more than 2+3+5 per second can reach
	csv := w.WriteCSV("precision.csv", 4915112000000, n)
	w.Timeout = run + 2*time.Minute
	p := w.Start(runArgs(csv)...)
	w.WaitFor(30*time.Second, "the first request", func() bool { return len(w.api.Records(t)) > 0 })
	time.Sleep(run)
	stop := time.Now()
	p.Signal(t, os.Interrupt)
	if r := p.Wait(t); r.Code != 130 {
		t.Errorf("run after SIGINT: %s", r)
	}

	recs := w.api.Records(t)
	claims := w.Claims()
	start := recs[0].At
	for i, a := range threeAccounts {
		lim := tiers[i].lim
		var mine, myClaims []record
		for _, r := range recs {
			if r.PhoneNumberID == a.phoneNumberID && !r.At.After(stop) {
				mine = append(mine, r)
			}
		}
		for _, c := range claims {
			if c.PhoneNumberID == a.phoneNumberID {
				myClaims = append(myClaims, c)
			}
		}
		ideal := float64(lim.burst) + lim.rate*stop.Sub(start).Seconds()
		achieved := float64(len(mine)) / ideal
		b := checkBuckets(t, mine, myClaims, lim)
		t.Logf("FIGURES precision [%s] %s: rate %g/s burst %d over %v: %d requests of an ideal %.1f (%.1f %%), max_overdraw=%.2f (by claims %.2f)",
			size("short", "full"), a.name, lim.rate, lim.burst, stop.Sub(start).Round(time.Millisecond), len(mine), ideal, achieved*100, b.server, b.claims)
		if achieved < 0.98 {
			t.Errorf("%s achieved %.1f %% of its ideal schedule, want at least 98 %%", a.name, achieved*100)
		}
	}
}
