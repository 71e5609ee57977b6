package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestInterruptStartsNoRequest: after SIGINT no request starts. With every
// answer 400 ms away and 8 workers, a pool of claims waits behind the
// requests in flight; they go back unsent instead of going out once the
// workers are free (before, all of them did, ~400 ms after the signal).
func TestInterruptStartsNoRequest(t *testing.T) {
	const (
		workers = 8
		delay   = 400 * time.Millisecond
		n       = 60
	)
	w := newWorld(t, sandbox.Options{PairInterval: -1, Throughput: -1,
		Faults: sandbox.Faults{Slow: 1, SlowDelay: delay}})
	w.fastTiers("1000", "100")
	w.addAccounts(account{"main", "100000000000081", "active"})
	csv := w.WriteCSV("stop.csv", 4915112450000, n)
	p := w.Start(templateRun(csv, "spring_sale", "--workers", fmt.Sprint(workers))...)
	w.WaitFor(10*time.Second, "a pool of requests in flight", func() bool { return len(w.api.Records()) >= workers })
	signalled := time.Now()
	p.Signal(t, syscall.SIGINT)
	if r := p.Wait(t); r.Code != 130 {
		t.Fatalf("after SIGINT: want exit 130\n%s", r)
	}
	recs := w.api.Records()
	late := 0
	for _, rec := range recs {
		// A request on its way when the signal came may land a moment
		// after it; a queued one would come a whole answer later.
		if rec.At.After(signalled.Add(delay / 4)) {
			late++
		}
	}
	if late > 0 {
		t.Errorf("%d of %d requests started after SIGINT, want none", late, len(recs))
	}
	rows := w.Rows()
	got := testproc.States(rows)
	if got["sending"] > 0 || got["unknown"] > 0 || got["sent"] != len(recs) || got["pending"] != n-len(recs) {
		t.Errorf("rows %v after %d requests: want each request sent and every other row pending", got, len(recs))
	}
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, true)
}

// TestSuppressedCampaignFinishes: a campaign whose every row went on the
// suppression list after the import finishes at once, its rows failed as
// suppressed with code -1, and `campaign retry --code -1` selects them.
// Before, the run spun forever at full CPU.
func TestSuppressedCampaignFinishes(t *testing.T) {
	const first = 4915112460000
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.fastTiers("50", "5")
	w.addAccounts(account{"main", "100000000000091", "active"})
	csv := w.WriteCSV("sup.csv", first, 3)
	w.OK("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	for i := range 3 {
		w.OK("suppress", "add", fmt.Sprintf("+%d", first+i))
	}
	start := time.Now()
	if r := w.Run("campaign", "run", "--resume", "1"); r.Code != 0 {
		t.Fatalf("run of a fully suppressed campaign: want exit 0\n%s", r)
	}
	t.Logf("finished in %v", time.Since(start).Round(time.Millisecond))
	if n := len(w.api.Records()); n != 0 {
		t.Errorf("%d requests to suppressed numbers", n)
	}
	for _, m := range w.Rows() {
		if m.State != "failed" || m.ErrorCode != -1 || !strings.HasPrefix(m.ErrorMessage, "suppressed") {
			t.Errorf("%s: %s %d %q, want failed, -1, suppressed", m.Phone, m.State, m.ErrorCode, m.ErrorMessage)
		}
	}
	if c := w.campaigns(); len(c) != 1 || c[0].State != "finished" {
		t.Errorf("campaigns %+v, want one finished", c)
	}
	if r := w.OK("campaign", "retry", "1", "--code", "-1"); !strings.Contains(r.Stdout+r.Stderr, "3") {
		t.Errorf("retry --code -1 did not queue the 3 rows:\n%s", r)
	}
}

// TestUnknownPhoneNumberID: an account with a phone number id Meta does
// not know (HTTP 400, code 100, error_subcode 33) is dropped — by the
// preflight's read, or at its first send if the read passed — and its rows
// go to the other account: the 10-row campaign finishes with every row
// sent. Before, its rows failed one by one as permanent errors.
func TestUnknownPhoneNumberID(t *testing.T) {
	const (
		n    = 10
		typo = "100000000000102"
	)
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{UnknownNumbers: []string{typo}}})
	w.fastTiers("50", "5")
	w.addAccounts(account{"typo", typo, "active"}, account{"good", "100000000000101", "active"})
	r := w.Run(templateRun(w.WriteCSV("typo.csv", 4915112470000, n), "spring_sale", "--workers", "1")...)
	if r.Code != 0 {
		t.Fatalf("want exit 0 with the good account sending everything\n%s", r)
	}
	if got := testproc.States(w.Rows()); got["sent"] != n {
		t.Errorf("rows %v, want all %d sent", got, n)
	}
	c := w.status()
	if len(c) != 1 || !droppedNames(c[0])["typo"] || droppedNames(c[0])["good"] {
		t.Errorf("status %+v: want the account typo dropped, good not", c)
	}
	sends := 0
	for _, rec := range w.api.Records() {
		if rec.PhoneNumberID == typo {
			sends++
		}
	}
	if sends > 1 {
		t.Errorf("%d sends from the unknown id, want at most 1", sends)
	}
}
