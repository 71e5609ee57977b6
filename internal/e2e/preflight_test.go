package e2e

import (
	"database/sql"
	"net"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestWrongAddressBurnsNothing: with the API base URL on a closed port, or
// not a URL at all, `campaign run` stops before touching a row, with a
// clear error and a non-zero exit; nothing is failed and no retry is spent.
func TestWrongAddressBurnsNothing(t *testing.T) {
	w := newWorld(t, sandbox.Options{PairInterval: -1})
	w.fastTiers("50", "10")
	w.addAccounts(account{"main", "100000000000081", "active"})
	csv := w.writeCSV("down.csv", 4915112380000, 20)
	w.ok("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
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
		w.extraEnv = []string{"WASEND_API_BASE=" + tt.base}
		for _, args := range [][]string{
			{"campaign", "run", "--resume", "1"},
			{"campaign", "run", w.writeCSV("new.csv", 4915112390000, 5), "--template", "spring_sale", "--lang", "en_US", "--params", "name"},
		} {
			r := w.run(args...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "nothing was sent") {
				t.Errorf("WASEND_API_BASE=%s wasend %s: want exit 1 saying %q\n%s", tt.base, strings.Join(args, " "), tt.want, r)
			}
		}
		w.extraEnv = nil
		var attempts int
		w.query(`SELECT count(*) FROM attempts`, func(rs *sql.Rows) error { return rs.Scan(&attempts) })
		got := states(w.rows())
		if attempts != 0 || got["pending"] != 20 || len(got) != 1 {
			t.Errorf("WASEND_API_BASE=%s: %d attempts, rows %v; want no attempt and all 20 pending", tt.base, attempts, got)
		}
		if c := w.campaigns(); len(c) != 1 {
			t.Errorf("WASEND_API_BASE=%s: %d campaigns; a run that cannot send must not import", tt.base, len(c))
		}
	}
	if n := len(w.api.Records()); n != 0 {
		t.Errorf("the sandbox got %d messages", n)
	}
	// The same campaign on the right address sends everything.
	w.ok("campaign", "run", "--resume", "1")
	if got := states(w.rows()); got["sent"] != 20 {
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
	r := w.run("account", "test")
	if r.code != 1 || !strings.Contains(r.stdout, "good\t100000000000091\tok") || !strings.Contains(r.stdout, "gone\t100000000000092\tfailed") {
		t.Errorf("account test: want exit 1, good ok and gone failed\n%s", r)
	}
	w.ok("account", "test", "good")

	csv := w.writeCSV("mixed.csv", 4915112400000, 20)
	r = w.ok("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	if !strings.Contains(r.stderr, "account gone (phone number id 100000000000092) is LEFT OUT of this run") {
		t.Errorf("no loud warning about the unknown number\n%s", r)
	}
	for _, rec := range w.api.Records() {
		if rec.PhoneNumberID == "100000000000092" {
			t.Fatalf("a message went out from the account left out: %+v", rec)
		}
	}
	if got := states(w.rows()); got["sent"] != 20 {
		t.Errorf("rows %v, want all 20 sent by the good account", got)
	}
	if c := w.status(); len(c) != 1 || len(c[0].DroppedAccounts) != 1 || !droppedNames(c[0])["gone"] || c[0].DroppedAccounts[0].ErrorCode != 100 {
		t.Errorf("status: %+v, want gone dropped from the campaign with code 100", c)
	}
}
