package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/sandbox"
)

// syncCLI is a CLI whose accounts read their numbers from a sandbox that
// says what numbers says.
func syncCLI(t *testing.T, numbers map[string]sandbox.Number) *cli {
	t.Helper()
	box := sandbox.New(sandbox.Options{Faults: sandbox.Faults{Numbers: numbers}})
	srv := httptest.NewServer(box)
	t.Cleanup(srv.Close)
	c := newCLI(t)
	c.env["WASEND_API_BASE"] = srv.URL
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "main-token", "fresh-token"
	c.addAccounts()
	return c
}

func TestAccountSync(t *testing.T) {
	c := syncCLI(t, map[string]sandbox.Number{
		"1234567890": {MessagingLimit: "TIER_2K", ThroughputLevel: "HIGH"},
		"2345678901": {MessagingLimit: "TIER_250", QualityRating: "RED"},
	})
	c.ok("portfolio", "add", "acme", "--limit", "10k")
	c.ok("account", "set", "main-01", "--portfolio", "acme")
	out, errOut, err := c.run("account", "sync", "--json")
	if err != nil {
		t.Fatalf("sync: %v\n%s", err, errOut)
	}
	var res []syncJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].MessagingLimit != "2000" || res[0].Throughput != 1000 || res[0].QualityRating != "GREEN" ||
		res[0].NameStatus != "APPROVED" || res[0].VerifiedName == "" || res[0].SyncedAt == nil {
		t.Errorf("sync results %+v", res)
	}
	if !strings.Contains(errOut, "fresh-02: QUALITY RATING IS RED") {
		t.Errorf("no loud warning about RED quality:\n%s", errOut)
	}

	st := c.status()
	main, fresh := st.Accounts[0], st.Accounts[1]
	// Upgraded to 1,000/s: the tier's rate is the lower bound again.
	if main.Throughput != 1000 || main.ThroughputSource != "meta" || main.QualityRating != "GREEN" || main.SyncedAt == nil {
		t.Errorf("main-01 after sync %+v", main)
	}
	if fresh.Disabled || fresh.MessagingLimit != "250" {
		t.Errorf("fresh-02 after sync %+v", fresh)
	}
	// The read limit and the pin: the lower applies, both shown.
	ps := map[string]report.Portfolio{}
	for _, p := range st.Portfolios {
		ps[p.Name] = p
	}
	if p := ps["acme"]; *p.Limit != 2000 || *p.PinnedLimit != 10000 || *p.ReadLimit != "2000" || p.ReadFrom != "main-01" {
		t.Errorf("acme %+v, want the read 2,000 under the pinned 10,000", p)
	}
	if p := ps["fresh-02"]; p.Limit == nil || *p.Limit != 250 || *p.Allowed != 237 {
		t.Errorf("fresh-02's own portfolio %+v, want 250 read", p)
	}

	_, errOut, err = c.run("account", "sync", "fresh-02", "--pause-on-red")
	if err != nil || !strings.Contains(errOut, "disabled") {
		t.Errorf("--pause-on-red: %v\n%s", err, errOut)
	}
	if st := c.status(); !st.Accounts[1].Disabled {
		t.Error("fresh-02 is RED and was not disabled with --pause-on-red")
	}
}

// TestAccountSyncUnreadableLimit: a number whose messaging limit can't be
// read fails the sync (and the run's preflight leaves it out).
func TestAccountSyncUnreadableLimit(t *testing.T) {
	c := syncCLI(t, map[string]sandbox.Number{"1234567890": {MessagingLimit: "-"}})
	out, _, err := c.run("account", "sync", "--json")
	if err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Fatalf("sync: %v, want 1 of 2 failed", err)
	}
	var res []syncJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res[0].Result != "failed" || !strings.Contains(res[0].Error, "messaging limit could not be read") {
		t.Errorf("main-01 %+v", res[0])
	}
	if a := c.status().Accounts[0]; a.SyncedAt != nil {
		t.Errorf("a failed sync was recorded: %+v", a)
	}
}
