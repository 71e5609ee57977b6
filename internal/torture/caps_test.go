//go:build torture

package torture

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCapBoundary: caps of 7 per account, more recipients than two quota
// days allow, and throttling, server errors and dropped answers on the way
// (a refused message gives its cap back; a dropped one was accepted and
// keeps it). `quota reset --force` from another process mid-run starts the
// operator's new quota day; a plain `quota reset` afterwards on the same
// calendar day must say "already reset" and change nothing. Pass, from the
// server's record: exactly 7 accepted per account before the reset and 7
// after it, never 8.
func TestCapBoundary(t *testing.T) {
	const dailyCap = 7
	var (
		n      = size(50, 200)   // > 2 days × 3 accounts × 7
		settle = 3 * time.Second // > the 2 s poll of a campaign waiting on caps
	)
	seed := testSeed(t)
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed),
		"--throttle", "0.10", "--server-error", "0.05", "--drop", "0.05")
	lim := limit{rate: 20, burst: 5}
	w.setup(lim.rate, lim.burst, dailyCap, threeAccounts)
	csv := w.WriteCSV("caps.csv", 4915112390000, n)
	run := runArgs(csv)

	// all waits until every account reached want accepted messages, then
	// holds still for settle: nothing beyond the cap may follow.
	all := func(want int, what string) map[string]int {
		w.WaitFor(60*time.Second, what, func() bool {
			per := acceptedBy(w.api.Records(t))
			for _, a := range threeAccounts {
				if per[a.phoneNumberID] < want {
					return false
				}
			}
			return true
		})
		time.Sleep(settle)
		return acceptedBy(w.api.Records(t))
	}
	checkDay := func(day string, per map[string]int, want int) {
		for _, a := range threeAccounts {
			if per[a.phoneNumberID] != want {
				t.Errorf("%s: account %s had %d messages accepted in all, want exactly %d", day, a.name, per[a.phoneNumberID], want)
			}
		}
	}

	p := w.Start(run...)
	day1 := all(dailyCap, "7 accepted per account")
	checkDay("first quota day", day1, dailyCap)
	if p.Exited() {
		t.Fatalf("campaign ended at the caps instead of waiting: %s", p.Wait(t))
	}

	resetAt := time.Now()
	r := w.OK("quota", "reset", "--force")
	if strings.Count(r.Stdout, "new quota day") != len(threeAccounts) {
		t.Errorf("quota reset --force: want a new quota day for each of %d accounts\n%s", len(threeAccounts), r)
	}
	day2 := all(2*dailyCap, "7 more accepted per account after the reset")
	checkDay("after quota reset --force", day2, 2*dailyCap)

	r = w.OK("quota", "reset")
	if strings.Count(r.Stdout+r.Stderr, "already reset") != len(threeAccounts) {
		t.Errorf("second quota reset on the same day: want \"already reset\" for each of %d accounts\n%s", len(threeAccounts), r)
	}
	time.Sleep(settle)
	after := acceptedBy(w.api.Records(t))
	checkDay("after the second (plain) quota reset", after, 2*dailyCap)

	p.Signal(t, syscall.SIGTERM)
	r = p.Wait(t)
	checkOutput(t, "campaign run", r)
	if r.Code != 130 {
		t.Errorf("campaign waiting on caps, then SIGTERM: want exit 130\n%s", r)
	}
	// The same command under --stop-when-capped sends nothing and says so.
	before := len(w.api.Records(t))
	r = w.Run(append(run, "--stop-when-capped")...)
	checkOutput(t, "campaign run --stop-when-capped", r)
	if r.Code != 3 {
		t.Errorf("every account at its cap, --stop-when-capped: want exit 3\n%s", r)
	}
	recs := w.api.Records(t)
	if len(recs) != before {
		t.Errorf("a run with every account capped made %d requests", len(recs)-before)
	}

	// Judge per quota day from the server's timestamps.
	var beforeReset, afterReset []record
	for _, rec := range recs {
		if rec.At.Before(resetAt) {
			beforeReset = append(beforeReset, rec)
		} else {
			afterReset = append(afterReset, rec)
		}
	}
	f := judge(t, w.Rows(), recs, true)
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	f.capBreaches = checkCaps(t, beforeReset, dailyCap) + checkCaps(t, afterReset, dailyCap)
	checkDay("first quota day (by server time)", acceptedBy(beforeReset), dailyCap)
	checkDay("second quota day (by server time)", acceptedBy(afterReset), dailyCap)
	outcomes := map[string]int{}
	for _, rec := range recs {
		outcomes[rec.Outcome]++
	}
	report(t, "caps", f, fmt.Sprintf("day1=%v day2=%v outcomes=%v", acceptedBy(beforeReset), acceptedBy(afterReset), outcomes))
}
