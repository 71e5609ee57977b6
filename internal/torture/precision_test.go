//go:build torture

package torture

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

// TestRatePrecision: three accounts with different rates send for a while
// (20 s short, 10 min full) with more recipients than they can reach. Pass:
// each account's bucket gave at least 98 % of the tokens an exact one
// gives from its first claim to the stop (its burst plus its rate over the
// run, whole tokens only), and, from the server's record, no bucket was
// overdrawn by more than one token.
//
// The tokens are counted at their claims (wasend's attempts, put-backs at
// the interrupt included), not at the server: a request claimed before the
// stop may reach the server after it, later the busier the machine, and is
// no token the limiter failed to give. And only whole tokens count: the
// fraction of the next one is no shortfall (at 2/s over 20 s, the slowest
// account's whole ideal is 43 tokens, so a fraction was 2 % of it).
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
	taken := tokensTaken(w)
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
		ts := taken[a.phoneNumberID]
		if len(ts) == 0 {
			t.Errorf("%s took no token", a.name)
			continue
		}
		start, got := ts[0], 0
		for _, at := range ts {
			if !at.After(stop) {
				got++
			}
		}
		ideal := math.Floor(float64(lim.burst) + lim.rate*stop.Sub(start).Seconds())
		achieved := float64(got) / ideal
		b := checkBuckets(t, mine, myClaims, lim)
		t.Logf("FIGURES precision [%s] %s: rate %g/s burst %d over %v: %d tokens of an ideal %.0f (%.1f %%), %d requests at the server by the stop, max_overdraw=%.2f (by claims %.2f)",
			size("short", "full"), a.name, lim.rate, lim.burst, stop.Sub(start).Round(time.Millisecond), got, ideal, achieved*100, len(mine), b.server, b.claims)
		if achieved < 0.98 {
			t.Errorf("%s took %.1f %% of its ideal schedule's tokens, want at least 98 %%", a.name, achieved*100)
		}
	}
}

// tokensTaken is when each account (by phone number id) took a token: its
// attempts' claims, in order, those put back unsent included.
func tokensTaken(w *world) map[string][]time.Time {
	out := map[string][]time.Time{}
	w.Query(`SELECT a.phone_number_id, t.claimed_at FROM attempts t JOIN accounts a ON a.id = t.account_id ORDER BY t.claimed_at`,
		func(rs *sql.Rows) error {
			var id string
			var ns int64
			err := rs.Scan(&id, &ns)
			out[id] = append(out[id], time.Unix(0, ns))
			return err
		})
	return out
}
