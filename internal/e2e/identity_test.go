package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// A campaign is its message and its recipients, however the file is read
// (issue 10 §1). Each reproduced case runs the real binary against the
// sandbox, and the sandbox's own record of requests judges.

// TestIdentityFinishedList: re-running a finished list with a no-op read
// flag (--delimiter ,; --region DE on international numbers) or with a new
// --name messages nobody again; only --again does, deliberately.
func TestIdentityFinishedList(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.OK("tier", "set", "active", "--rate", "40", "--burst", "5", "--daily-cap", "100000")
	w.addAccounts(account{"main", "100000000000003", "active"})
	const n = 20
	csv := w.WriteCSV("list.csv", 4915112380000, n)
	run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	w.OK(run...)
	if got := len(testproc.Accepted(w.api.Records())); got != n {
		t.Fatalf("first run: %d recipients accepted, want %d", got, n)
	}

	for _, extra := range [][]string{nil, {"--delimiter", ","}, {"--region", "DE"}, {"--delimiter", ",", "--region", "de", "--phone-column", "phone"}} {
		r := w.OK(append(run, extra...)...)
		if !strings.Contains(r.Stderr, `campaign 1 "list.csv" already sent this message to these recipients`) ||
			!strings.Contains(r.Stderr, "--again") || !strings.Contains(r.Stdout, "already finished") {
			t.Errorf("run %v on the finished list: want it refused, naming campaign 1 and --again\n%s", extra, r)
		}
	}
	// A new name is a deliberate new campaign, but everybody on it got this
	// template minutes ago: nothing is left to send, so nothing is made.
	r := w.Run(append(run, "--name", "second-wave")...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "all 20 rows were skipped (20 sent the same template within 24h0m0s (--again sends anyway)") {
		t.Errorf("--name second-wave on the finished list: want exit 1 naming the 24 h rule\n%s", r)
	}
	if cs := w.campaigns(); len(cs) != 1 {
		t.Errorf("%d campaigns after the re-runs, want 1: %+v", len(cs), cs)
	}
	recs := w.api.Records()
	checkNoDuplicates(t, recs)
	if len(recs) != n {
		t.Errorf("the re-runs made %d requests, want none", len(recs)-n)
	}

	// --again is the explicit second send.
	w.OK(append(run, "--name", "second-wave", "--again")...)
	cs := w.campaigns()
	if len(cs) != 2 || cs[1].Sent != n {
		t.Fatalf("after --again: campaigns %+v, want a second one with %d sent", cs, n)
	}
	for to, rs := range testproc.Accepted(w.api.Records()) {
		if len(rs) != 2 {
			t.Errorf("%s accepted %d times after --again, want 2", to, len(rs))
		}
	}
}

// TestIdentityEditedList: an interrupted campaign whose file gains a row
// (and is read with a no-op flag) is continued: the new row is added, and
// nobody already sent is sent again.
func TestIdentityEditedList(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.OK("tier", "set", "active", "--rate", "40", "--burst", "5", "--daily-cap", "8")
	w.addAccounts(account{"main", "100000000000003", "active"})
	const n = 20
	csv := w.WriteCSV("list.csv", 4915112390000, n)
	run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name", "--stop-when-capped"}
	if r := w.Run(run...); r.Code != 3 {
		t.Fatalf("first run: want exit 3 at the cap of 8\n%s", r)
	}
	// The same list with a no-op flag, still capped: the same campaign.
	r := w.Run(append(run, "--delimiter", ",")...)
	if r.Code != 3 || !strings.Contains(r.Stderr, `continuing campaign 1 "list.csv": 0 new recipients added, 20 already there`) {
		t.Errorf("no-op flag on the interrupted campaign: want it continued\n%s", r)
	}

	f, err := os.OpenFile(csv, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("+4915112399999,Late Person\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	w.OK("tier", "set", "active", "--daily-cap", "1000")
	r = w.OK(run...)
	if !strings.Contains(r.Stderr, `continuing campaign 1 "list.csv": 1 new recipient added, 20 already there`) {
		t.Errorf("appended row: want the campaign continued with 1 new recipient\n%s", r)
	}
	cs := w.campaigns()
	if len(cs) != 1 || cs[0].Total != n+1 || cs[0].Sent != n+1 {
		t.Errorf("campaigns %+v, want one with %d recipients, all sent", cs, n+1)
	}
	recs := w.api.Records()
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, w.Rows(), recs, false)
	if got := len(testproc.Accepted(recs)); got != n+1 {
		t.Errorf("%d recipients accepted, want %d", got, n+1)
	}

	// --name on the list of an unfinished campaign with another name is
	// refused, not ignored.
	if err := os.WriteFile(csv+".2", []byte("phone,name\n+4915112390000,A\n+4915112377777,B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.OK("campaign", "import", csv+".2", "--template", "other", "--lang", "en_US", "--params", "name")
	r = w.Run("campaign", "import", csv+".2", "--template", "other", "--lang", "en_US", "--params", "name", "--delimiter", ",", "--name", "renamed")
	if r.Code == 0 || !strings.Contains(r.Stderr, `unfinished campaign 2 "list.csv.2"`) || !strings.Contains(r.Stderr, "--again") {
		t.Errorf("--name on an unfinished campaign's list: want it refused\n%s", r)
	}
}
