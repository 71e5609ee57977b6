package cmd

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/sandbox"
)

// preflightCLI is a CLI with main-01 (1234567890) and fresh-02
// (2345678901) sending to a sandbox behind h's front: h gets each request
// first and passes it on with next, or answers it itself.
func preflightCLI(t *testing.T, opts sandbox.Options, front func(w http.ResponseWriter, r *http.Request, next http.Handler)) (*cli, *sandbox.Server) {
	t.Helper()
	box := sandbox.New(opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if front == nil {
			box.ServeHTTP(w, r)
			return
		}
		front(w, r, box)
	}))
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = srv.URL
	c.addAccounts()
	return c, box
}

func writePreflightList(t *testing.T, name string, first, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range n {
		fmt.Fprintf(&b, "+49151%08d,P%d\n", first+i, i)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func sentFrom(box *sandbox.Server) map[string]int {
	out := map[string]int{}
	for _, r := range box.Records() {
		if r.Outcome == sandbox.OutcomeAccepted {
			out[r.PhoneNumberID]++
		}
	}
	return out
}

// TestRunPreflightBeforeImport: a run whose preflight fails imports
// nothing — no campaign is left behind waiting — as the README says.
func TestRunPreflightBeforeImport(t *testing.T) {
	c, box := preflightCLI(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{BadTokens: []string{"revoked"}}}, nil)
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "revoked", "revoked"
	list := writePreflightList(t, "promo.csv", 0, 3)
	_, errOut, err := c.run("campaign", "run", list, "--text", "hi", "--ignore-window")
	if !errors.Is(err, campaign.ErrNoUsableAccount) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("run with every token refused: %v, want no usable account, nothing sent\n%s", err, errOut)
	}
	if got := c.ok("campaign", "list", "--json"); got != "[]\n" {
		t.Errorf("the failed preflight left a campaign: %s", got)
	}

	// The same with an address nothing answers on.
	c.env["WASEND_API_BASE"] = "http://127.0.0.1:1"
	if _, _, err := c.run("campaign", "run", list, "--text", "hi", "--ignore-window"); err == nil || !strings.Contains(err.Error(), "cannot reach the Cloud API") {
		t.Fatalf("run on a closed port: %v", err)
	}
	if got := c.ok("campaign", "list", "--json"); got != "[]\n" {
		t.Errorf("the unreachable API left a campaign: %s", got)
	}
	if n := len(box.Records()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}

// TestRunLeavesOutAccountWithoutToken: a missing token variable leaves that
// account out of the run with a warning naming the variable (never a
// value), as a refused token does; the others send. The run stops only
// when no account is left, and then imports nothing.
func TestRunLeavesOutAccountWithoutToken(t *testing.T) {
	c, box := preflightCLI(t, sandbox.Options{PairInterval: -1}, nil)
	c.env["WA_TOKEN_MAIN"] = "EAAG-SECRET-cmd-3b1d"
	list := writePreflightList(t, "promo.csv", 0, 4)
	_, errOut, err := c.run("campaign", "run", list, "--text", "hi", "--ignore-window")
	if err != nil {
		t.Fatalf("run with fresh-02's token unset: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "account fresh-02") || !strings.Contains(errOut, "LEFT OUT") || !strings.Contains(errOut, "WA_TOKEN_FRESH") {
		t.Errorf("no warning naming fresh-02 and WA_TOKEN_FRESH:\n%s", errOut)
	}
	if strings.Contains(errOut, "EAAG-SECRET") {
		t.Errorf("a token value was shown:\n%s", errOut)
	}
	if got := sentFrom(box); got["1234567890"] != 4 || len(got) != 1 {
		t.Errorf("accepted per number %v, want all 4 from main-01", got)
	}
	if s := c.status(); len(s.Campaigns) != 1 || len(s.Campaigns[0].DroppedAccounts) != 1 || s.Campaigns[0].DroppedAccounts[0].Account != "fresh-02" {
		t.Errorf("status: want fresh-02 dropped from the campaign, got %+v", s.Campaigns)
	}

	// No account left: stop, naming the variable, and import nothing.
	c.ok("account", "set", "fresh-02", "--disable")
	delete(c.env, "WA_TOKEN_MAIN")
	_, _, err = c.run("campaign", "run", writePreflightList(t, "second.csv", 100, 2), "--text", "hi", "--ignore-window")
	if !errors.Is(err, campaign.ErrNoUsableAccount) || !strings.Contains(err.Error(), "WA_TOKEN_MAIN") || strings.Contains(err.Error(), "WA_TOKEN_FRESH") {
		t.Errorf("with main-01's token unset and fresh-02 disabled: %v, want no usable account naming only WA_TOKEN_MAIN", err)
	}
	if s := c.status(); len(s.Campaigns) != 1 {
		t.Errorf("%d campaigns after a run with no account left, want the first one only", len(s.Campaigns))
	}
}

// TestRunLeavesOutAccountNonGraph404: a proxy that has no route for one
// number answers it with an HTML 404 and no Graph error. That account is
// left out of the run with a clear reason — its configuration, not an
// outage — and the others send everything.
func TestRunLeavesOutAccountNonGraph404(t *testing.T) {
	c, box := preflightCLI(t, sandbox.Options{PairInterval: -1}, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "/2345678901") {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body>404 Not Found</body></html>")
			return
		}
		next.ServeHTTP(w, r)
	})
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "main-token", "fresh-token"
	_, errOut, err := c.run("campaign", "run", writePreflightList(t, "promo.csv", 0, 4), "--text", "hi", "--ignore-window")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "account fresh-02 (phone number id 2345678901) is LEFT OUT") || !strings.Contains(errOut, "HTTP 404") {
		t.Errorf("no warning leaving fresh-02 out for its 404:\n%s", errOut)
	}
	if strings.Contains(errOut, "outage") {
		t.Errorf("a 404 for one number taken for an outage:\n%s", errOut)
	}
	if got := sentFrom(box); got["1234567890"] != 4 || len(got) != 1 {
		t.Errorf("accepted per number %v, want all 4 from main-01", got)
	}
}

// TestAccountPhoneNumberIDIsAnID: a phone number given as --phone-number-id
// is refused (exit 2) with what it looks like and where the id is found;
// nothing is stored.
func TestAccountPhoneNumberIDIsAnID(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	msg := c.usage("account", "add", "main-01", "--phone-number-id", "+49 151 23456789", "--token-env", "WA_TOKEN_MAIN")
	for _, want := range []string{"--phone-number-id", "looks like a phone number", "WhatsApp Manager"} {
		if !strings.Contains(msg, want) {
			t.Errorf("account add with a phone number: %q does not say %q", msg, want)
		}
	}
	if got := c.ok("account", "list", "--json"); got != "[]\n" {
		t.Errorf("an account was stored: %s", got)
	}
	c.ok("account", "add", "main-01", "--phone-number-id", "106540352242922", "--token-env", "WA_TOKEN_MAIN")
	if msg := c.usage("account", "set", "main-01", "--phone-number-id", "+4915123456789"); !strings.Contains(msg, "looks like a phone number") {
		t.Errorf("account set with a phone number: %q", msg)
	}
	if got := c.ok("account", "list", "--json"); !strings.Contains(got, `"106540352242922"`) {
		t.Errorf("account set changed the id: %s", got)
	}
}
