package e2e

import (
	"database/sql"
	"net"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestWrongAddressBurnsNothing: with the API base URL on a closed port, or
// not a URL at all, `campaign run` stops before touching a row, with a
// clear error and a non-zero exit; nothing is failed and no retry is spent,
// and a new file is not imported (the preflight comes first).
func TestWrongAddressBurnsNothing(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.fastTiers("50", "10")
	w.addAccounts(account{"main", "100000000000081", "active"})
	csv := w.WriteCSV("down.csv", 4915112380000, 20)
	w.OK("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	for _, tt := range []struct{ base, want string }{
		{closed, "cannot reach the Cloud API at " + closed},
		{"notaurl", `"notaurl" is not a URL`},
	} {
		good := w.APIBase
		w.APIBase = tt.base
		for _, args := range [][]string{
			{"campaign", "run", "--resume", "1"},
			{"campaign", "run", w.WriteCSV("new.csv", 4915112390000, 5), "--template", "spring_sale", "--lang", "en_US", "--params", "name"},
		} {
			r := w.Run(args...)
			if r.Code != 1 || !strings.Contains(r.Stderr, tt.want) || !strings.Contains(r.Stderr, "nothing was sent") {
				t.Errorf("WASEND_API_BASE=%s wasend %s: want exit 1 saying %q\n%s", tt.base, strings.Join(args, " "), tt.want, r)
			}
		}
		w.APIBase = good
		var attempts int
		w.Query(`SELECT count(*) FROM attempts`, func(rs *sql.Rows) error { return rs.Scan(&attempts) })
		got := testproc.States(w.Rows())
		if attempts != 0 || got["pending"] != 20 || len(got) != 1 {
			t.Errorf("WASEND_API_BASE=%s: %d attempts, rows %v; want no attempt and the first campaign's 20 pending", tt.base, attempts, got)
		}
		if cs := w.campaigns(); len(cs) != 1 {
			t.Errorf("WASEND_API_BASE=%s: %d campaigns, want only the one imported before", tt.base, len(cs))
		}
	}
	if n := len(w.api.Records()); n != 0 {
		t.Errorf("the sandbox got %d messages", n)
	}
	// The same campaign on the right address sends everything.
	w.OK("campaign", "run", "--resume", "1")
	if got := testproc.States(w.Rows()); got["sent"] != 20 {
		t.Errorf("after the address was fixed: rows %v, want 20 sent", got)
	}
}

// TestPreflightLeavesBadAccountOut: an account whose number Graph does not
// know, and one whose token is refused, are left out with a loud warning;
// the good one sends everything, and `account test` says the same.
func TestPreflightLeavesBadAccountOut(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{UnknownNumbers: []string{"100000000000092"}}})
	w.fastTiers("50", "10")
	w.addAccounts(account{"good", "100000000000091", "active"}, account{"gone", "100000000000092", "active"})
	r := w.Run("account", "test")
	if r.Code != 1 || !strings.Contains(r.Stdout, "good\t100000000000091\tok") || !strings.Contains(r.Stdout, "gone\t100000000000092\tfailed") {
		t.Errorf("account test: want exit 1, good ok and gone failed\n%s", r)
	}
	w.OK("account", "test", "good")

	csv := w.WriteCSV("mixed.csv", 4915112400000, 20)
	r = w.OK("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	if !strings.Contains(r.Stderr, "account gone (phone number id 100000000000092) is LEFT OUT of this run") {
		t.Errorf("no loud warning about the unknown number\n%s", r)
	}
	for _, rec := range w.api.Records() {
		if rec.PhoneNumberID == "100000000000092" {
			t.Fatalf("a message went out from the account left out: %+v", rec)
		}
	}
	if got := testproc.States(w.Rows()); got["sent"] != 20 {
		t.Errorf("rows %v, want all 20 sent by the good account", got)
	}
	if c := w.status(); len(c) != 1 || len(c[0].DroppedAccounts) != 1 || !droppedNames(c[0])["gone"] || c[0].DroppedAccounts[0].ErrorCode != 100 {
		t.Errorf("status: %+v, want gone dropped from the campaign with code 100", c)
	}
}
