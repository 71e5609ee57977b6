package e2e

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestTwoProcessesShareLimits runs two campaigns at once, in two processes
// on one database and the same two accounts. The accounts' buckets and
// daily caps live in the database, so together the processes must stay
// within each account's rate, burst and cap, as seen by the server.
func TestTwoProcessesShareLimits(t *testing.T) {
	const (
		rate     = 20.0
		burst    = 3
		dailyCap = 60
		perFile  = 80 // two files need 160 sends; the caps allow 120
	)
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	accts := []account{{"left", "100000000000011", "active"}, {"right", "100000000000012", "active"}}
	w.addAccounts(accts...)
	for _, a := range accts {
		w.OK("account", "set", a.name, "--rate", fmt.Sprint(rate), "--burst", fmt.Sprint(burst), "--daily-cap", fmt.Sprint(dailyCap))
	}
	files := []string{
		w.WriteCSV("one.csv", 4915112350000, perFile),
		w.WriteCSV("two.csv", 4915112360000, perFile),
	}
	var procs []*testproc.Proc
	for _, f := range files {
		procs = append(procs, w.Start("campaign", "run", f, "--template", "spring_sale", "--lang", "en_US",
			"--params", "name", "--stop-when-capped"))
	}
	capped := 0
	for i, p := range procs {
		r := p.Wait(t)
		switch r.Code {
		case 0:
		case 3:
			capped++
		default:
			t.Errorf("process %d: want exit 0 (finished) or 3 (capped)\n%s", i+1, r)
		}
		if strings.Contains(r.Stderr, "database is locked") {
			t.Errorf("process %d: the database was locked\n%s", i+1, r.Stderr)
		}
	}
	if capped == 0 {
		t.Errorf("both processes finished although the caps allow only %d of %d sends", 2*dailyCap, 2*perFile)
	}

	recs := w.api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, w.Rows(), recs, true)

	// The campaigns really ran at the same time.
	first, last := testproc.Spans(recs)
	if len(first) != 2 || !first["c1"].Before(last["c2"]) || !first["c2"].Before(last["c1"]) {
		t.Fatalf("the two campaigns did not overlap: first %v, last %v", first, last)
	}

	claims := w.Claims()
	claimOf, unsent := matchClaims(t, recs, claims)
	if len(unsent) > 0 {
		t.Errorf("%d tokens taken for requests that never reached the server, e.g. %+v", len(unsent), unsent[0])
	}
	for _, a := range accts {
		// The tokens themselves were taken exactly within the limit.
		var taken []time.Time
		for _, c := range claims {
			if c.PhoneNumberID == a.phoneNumberID {
				taken = append(taken, c.At)
			}
		}
		checkRate(t, "claims of "+a.name, sortedTimes(taken), rate, burst, 0)

		// Each request reached the server a little after its token was
		// taken, and not always equally late: the server may see the
		// requests bunched by up to that spread, plus one token.
		var times []time.Time
		acceptedN := 0
		lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
		for i, r := range recs {
			if r.PhoneNumberID != a.phoneNumberID {
				continue
			}
			times = append(times, r.At)
			if testproc.AcceptedOutcome(r.Outcome) {
				acceptedN++
			}
			d := r.At.Sub(claimOf[i].At)
			lo, hi = min(lo, d), max(hi, d)
		}
		jitter := hi - lo
		t.Logf("account %s: %d requests, %d accepted; %v to %v from claim to server", a.name, len(times), acceptedN, lo, hi)
		checkRate(t, "server, account "+a.name, sortedTimes(times), rate, burst, 1+rate*jitter.Seconds())
		if acceptedN > dailyCap {
			t.Errorf("account %s: server accepted %d messages, daily cap %d", a.name, acceptedN, dailyCap)
		}
		var used int
		w.Query(`SELECT used_today FROM accounts WHERE name = ?`, func(rs *sql.Rows) error { return rs.Scan(&used) }, a.name)
		if used > dailyCap || used != acceptedN {
			t.Errorf("account %s: used_today %d, server accepted %d, daily cap %d", a.name, used, acceptedN, dailyCap)
		}
	}
}
