package cmd

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// pausedSpringSale is a WABA's templates where spring_sale was paused.
var pausedSpringSale = json.RawMessage(`[
 {"name":"spring_sale","language":"en_US","status":"PAUSED","category":"MARKETING","parameter_format":"POSITIONAL",
  "components":[{"type":"BODY","text":"Hi {{1}}, spring is here!"}],"id":"2002"}]`)

// editedSpringSale is spring_sale edited to take two body parameters.
var editedSpringSale = json.RawMessage(`[
 {"name":"spring_sale","language":"en_US","status":"APPROVED","category":"MARKETING","parameter_format":"POSITIONAL",
  "components":[{"type":"BODY","text":"Hi {{1}}, spring is here! Code {{2}}"}],"id":"2002"}]`)

func writeList(t *testing.T) string {
	t.Helper()
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone,name,code\n+4915100000000,A,1\n+4915100000010,B,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestTemplateSyncPerAccountWABA: `template sync` without --waba reads
// each account's WABA once with that account's token; the preflight checks
// each account against its own WABA's templates and refuses a campaign one
// of its senders' WABA can't send, before any request.
func TestTemplateSyncPerAccountWABA(t *testing.T) {
	box := sandbox.New(sandbox.Options{PairInterval: -1})
	box.SetTemplates("waba-b", pausedSpringSale)
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = srv.URL
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"], c.env["WA_TOKEN_THIRD"] = "main-token", "fresh-token", "third-token"
	c.ok("account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "active", "--token-env", "WA_TOKEN_MAIN", "--waba-id", "waba-a")
	c.ok("account", "add", "fresh-02", "--phone-number-id", "2345678901", "--tier", "active", "--token-env", "WA_TOKEN_FRESH")
	c.ok("account", "add", "third-03", "--phone-number-id", "3456789012", "--tier", "active", "--token-env", "WA_TOKEN_THIRD", "--waba-id", "waba-a")
	c.ok("account", "set", "fresh-02", "--waba-id", "waba-b")

	var accts []struct {
		Name string
		WABA string `json:"waba_id"`
	}
	if err := json.Unmarshal([]byte(c.ok("account", "list", "--json")), &accts); err != nil {
		t.Fatal(err)
	}
	if len(accts) != 3 || accts[0].WABA != "waba-a" || accts[1].WABA != "waba-b" || accts[2].WABA != "waba-a" {
		t.Errorf("account list --json: %+v", accts)
	}
	if got := c.status().Accounts[1].WABA; got != "waba-b" {
		t.Errorf("status --json: fresh-02's waba_id %q", got)
	}

	c.usage("template", "sync", "--token-env", "WA_TOKEN_MAIN") // a token for which WABA?
	_, errOut, err := c.run("template", "sync")
	if err != nil || !strings.Contains(errOut, "synced 4 template(s) of WABA waba-a, 3 approved") ||
		!strings.Contains(errOut, "synced 1 template(s) of WABA waba-b, 0 approved") {
		t.Fatalf("template sync: %v\n%s", err, errOut)
	}
	reads := box.TemplateReads()
	want := []sandbox.TemplateRead{{WABA: "waba-b", Token: "fresh-token"}, {WABA: "waba-a", Token: "main-token"}}
	if len(reads) != 2 || reads[0] != want[0] || reads[1] != want[1] {
		t.Errorf("template reads %+v, want %+v (each WABA once, by account name, with its account's token)", reads, want)
	}

	list := writeList(t)
	spring := []string{list, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	for _, verb := range []string{"check", "plan", "run"} {
		_, _, err := c.run(append([]string{"campaign", verb}, spring...)...)
		if err == nil || !strings.Contains(err.Error(), `account(s) fresh-02 (WABA waba-b): template "spring_sale" (en_US) is PAUSED, not APPROVED`) {
			t.Errorf("campaign %s with a sender whose WABA paused the template: %v", verb, err)
		}
	}
	if n := len(box.Records()); n != 0 {
		t.Fatalf("%d requests sent for a refused campaign", n)
	}

	// wasend_demo isn't in waba-b at all: also refused, naming the account.
	_, _, err = c.run("campaign", "check", list, "--template", "wasend_demo", "--lang", "en_US", "--params", "name,code")
	if err == nil || !strings.Contains(err.Error(), `account(s) fresh-02 (WABA waba-b): template "wasend_demo" does not exist`) {
		t.Errorf("a template the WABA lacks: %v", err)
	}

	// Without the account the campaign goes from the others.
	c.ok("account", "set", "fresh-02", "--disable")
	c.ok(append([]string{"campaign", "run"}, spring...)...)
	recs := box.Records()
	for _, r := range recs {
		if r.PhoneNumberID == "2345678901" {
			t.Errorf("the disabled account sent to %s", r.To)
		}
	}
	if n := len(box.Accepted()); n != 2 || len(recs) != 2 {
		t.Errorf("%d accepted in %d requests, want 2", n, len(recs))
	}

	// An account whose WABA has no synced templates: said, not refused.
	c.ok("account", "set", "fresh-02", "--enable", "--waba-id", "waba-c")
	_, errOut, err = c.run(append([]string{"campaign", "check"}, spring...)...)
	if err != nil || !strings.Contains(errOut, `could not be checked for account(s) fresh-02: no templates synced from their WABA waba-c`) {
		t.Errorf("check with an unsynced WABA: %v\n%s", err, errOut)
	}
}

// TestResumeChecksTemplate: run --resume and campaign resume check the
// synced template again and refuse, before any request, a campaign whose
// template was paused or edited since its import.
func TestResumeChecksTemplate(t *testing.T) {
	box := sandbox.New(sandbox.Options{PairInterval: -1})
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = srv.URL
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "main-token", "fresh-token"
	c.addAccounts()
	c.ok("account", "set", "main-01", "--waba-id", "waba-a")
	c.ok("account", "set", "fresh-02", "--waba-id", "waba-a")
	list := writeList(t)

	// Nothing synced: the resume says so and sends.
	c.ok("campaign", "import", list, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	_, errOut, err := c.run("campaign", "run", "--resume", "1")
	if err != nil || !strings.Contains(errOut, `template "spring_sale" (en_US) could not be checked`) {
		t.Errorf("resume without synced templates: %v\n%s", err, errOut)
	}
	if n := len(box.Accepted()); n != 2 {
		t.Fatalf("%d accepted, want 2", n)
	}

	c.ok("template", "sync")
	c.ok("campaign", "import", list, "--name", "second", "--again", "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	for _, tc := range []struct {
		name      string
		templates json.RawMessage
		want      string
	}{
		{"paused", pausedSpringSale, `is PAUSED, not APPROVED`},
		{"edited", editedSpringSale, `has 2 body parameter(s) (1, 2); --params gives 1`},
	} {
		box.SetTemplates("waba-a", tc.templates)
		c.ok("template", "sync")
		for _, args := range [][]string{{"campaign", "run", "--resume", "2"}, {"campaign", "resume", "2"}} {
			_, _, err := c.run(args...)
			if err == nil || !strings.Contains(err.Error(), "campaign 2: nothing was sent: account(s) main-01, fresh-02 (WABA waba-a)") ||
				!strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s: %v", tc.name, strings.Join(args, " "), err)
			}
			var msg bytes.Buffer
			if code := exitCode(err, &msg); code == ExitOK {
				t.Errorf("%s: %s: exit 0", tc.name, strings.Join(args, " "))
			}
		}
	}
	if recs := len(box.Records()); recs != 2 {
		t.Errorf("%d requests, want the first campaign's 2", recs)
	}
}
