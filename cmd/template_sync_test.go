package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
)

// TestTemplateSyncAndPreflight syncs the sandbox's templates, lists them,
// and has check, plan and run refuse a campaign whose parameters don't fit
// the template before any request is sent; a fitting one goes.
func TestTemplateSyncAndPreflight(t *testing.T) {
	box := sandbox.New(sandbox.Options{PairInterval: -1})
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = srv.URL
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"], c.env["WASEND_TOKEN"] = "main-token", "fresh-token", "waba-token"
	c.addAccounts()
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone,name,code\n+4915100000000,A,1\n+4915100000010,B,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := []string{list, "--template", "spring_sale", "--lang", "en_US", "--params", "name,code"} // it takes one

	// Nothing synced: said, not refused.
	_, errOut, err := c.run(append([]string{"campaign", "check"}, wrong...)...)
	if err != nil || !strings.Contains(errOut, `template "spring_sale" (en_US) could not be checked`) {
		t.Errorf("check without synced templates: %v\n%s", err, errOut)
	}

	c.usage("template", "sync")
	if _, errOut, err := c.run("template", "sync", "--waba", "102290129340398"); err != nil || !strings.Contains(errOut, "synced 4 template(s)") {
		t.Fatalf("template sync: %v\n%s", err, errOut)
	}
	var ts []struct {
		Name, Language, Status string
	}
	if err := json.Unmarshal([]byte(c.ok("template", "list", "--json")), &ts); err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 || ts[0].Name != "autumn_sale" || ts[0].Status != "PENDING" {
		t.Errorf("template list %+v", ts)
	}

	for _, verb := range []string{"check", "plan", "run"} {
		_, _, err := c.run(append([]string{"campaign", verb}, wrong...)...)
		if err == nil || !strings.Contains(err.Error(), `template "spring_sale" (en_US) has 1 body parameter(s) (1); --params gives 2`) {
			t.Errorf("campaign %s with a parameter too many: %v", verb, err)
		}
	}
	_, _, err = c.run("campaign", "run", list, "--template", "autumn_sale", "--lang", "en_US", "--params", "name")
	if err == nil || !strings.Contains(err.Error(), "is PENDING, not APPROVED") {
		t.Errorf("run of a pending template: %v", err)
	}
	if recs := box.Records(); len(recs) != 0 {
		t.Fatalf("%d requests sent for refused campaigns", len(recs))
	}
	if got := c.ok("campaign", "list", "--json"); got != "[]\n" {
		t.Errorf("campaigns stored for refused runs: %s", got)
	}

	c.ok("campaign", "run", list, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	if n := len(box.Accepted()); n != 2 {
		t.Errorf("the fitting campaign: %d accepted, want 2", n)
	}
}
