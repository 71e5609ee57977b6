package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSandboxCallsOnlyItsOwnAPI: under --sandbox every Graph call — the
// template sync, the account check and sync, and a campaign run's preflight,
// template check and sends — goes to the sandbox wasend serves itself,
// never to WASEND_API_BASE (here a server that fails the test when hit);
// and a sandbox run starts without a template warning, its templates read
// from the sandbox.
func TestSandboxCallsOnlyItsOwnAPI(t *testing.T) {
	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Errorf("--sandbox sent %s %s to WASEND_API_BASE", r.Method, r.URL.Path)
		http.Error(w, "not here", http.StatusTeapot)
	}))
	t.Cleanup(elsewhere.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = elsewhere.URL
	c.env["WASEND_TOKEN"] = "EAAG-real-token-stays-home"

	if _, errOut, err := c.run("--sandbox", "template", "sync"); err != nil || !strings.Contains(errOut, "synced 4 template(s)") {
		t.Errorf("template sync --sandbox: %v\n%s", err, errOut)
	}
	if _, errOut, err := c.run("--sandbox", "template", "sync", "--waba", "102290129340398"); err != nil || !strings.Contains(errOut, "synced 4 template(s) of WABA 102290129340398") {
		t.Errorf("template sync --sandbox --waba: %v\n%s", err, errOut)
	}
	c.ok("--sandbox", "account", "test")
	c.ok("--sandbox", "account", "sync")

	csv := filepath.Join(t.TempDir(), "demo.csv")
	if err := os.WriteFile(csv, []byte("phone,name,code\n+4915100000001,Ann,1\n+4915100000002,Bo,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := c.run("--sandbox", "campaign", "run", csv)
	if err != nil {
		t.Fatalf("campaign run --sandbox: %v\n%s", err, errOut)
	}
	if strings.Contains(errOut, "could not be checked") || strings.Contains(errOut, "template sync") {
		t.Errorf("a sandbox run starts with a template warning:\n%s", errOut)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d request(s) went to WASEND_API_BASE under --sandbox", n)
	}
}
