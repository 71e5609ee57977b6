package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/report"
)

func TestPortfolioCommands(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.ok("portfolio", "add", "acme", "--limit", "2k")
	c.ok("portfolio", "add", "tiny", "--limit", "250", "--margin", "10%")
	c.ok("account", "set", "main-01", "--portfolio", "acme")
	c.ok("account", "add", "third", "--phone-number-id", "3456789012", "--portfolio", "acme")
	c.ok("portfolio", "set", "tiny", "--limit", "unlimited", "--margin", "0")

	var ps []report.Portfolio
	if err := json.Unmarshal([]byte(c.ok("portfolio", "list", "--json")), &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("portfolios %+v, want acme, tiny and fresh-02 on its own", ps)
	}
	acme, tiny, own := ps[0], ps[1], ps[2]
	if acme.Name != "acme" || *acme.PinnedLimit != 2000 || *acme.Limit != 2000 || *acme.Allowed != 1900 ||
		strings.Join(acme.Accounts, ",") != "main-01,third" || acme.Full {
		t.Errorf("acme = %+v", acme)
	}
	if tiny.Name != "tiny" || tiny.PinnedLimit != nil || tiny.Limit != nil || tiny.Margin != 0 || len(tiny.Accounts) != 0 {
		t.Errorf("tiny after unpinning = %+v", tiny)
	}
	if own.Name != "fresh-02" || !own.Own || own.Limit != nil {
		t.Errorf("fresh-02 = %+v", own)
	}
	rows := c.table("portfolio", "list")
	if rows[0]["PORTFOLIO"] != "acme" || rows[0]["APPLIES"] != "2000 (1900 after margin)" || rows[0]["USED 24H"] != "0/1900" {
		t.Errorf("portfolio list row %v", rows[0])
	}
	if a := c.status().Accounts[0]; a.Name != "main-01" || a.Portfolio != "acme" {
		t.Errorf("status account %+v, want main-01 in acme", a)
	}
	c.ok("account", "set", "main-01", "--portfolio", "")
	if a := c.status().Accounts[0]; a.Portfolio != "" {
		t.Errorf("main-01 still in %q", a.Portfolio)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"portfolio", "add", "x", "--limit", "2m"}, "--limit"},
		{[]string{"portfolio", "add", "x", "--limit", "-5"}, "--limit"},
		{[]string{"portfolio", "add", "x", "--margin", "100%"}, "--margin"},
		{[]string{"portfolio", "add", "x", "--margin", "five"}, "--margin"},
		{[]string{"portfolio", "set", "acme"}, "nothing to change"},
	} {
		if msg := c.usage(tt.args...); !strings.Contains(msg, tt.want) {
			t.Errorf("wasend %s: %q, want it to name %s", strings.Join(tt.args, " "), msg, tt.want)
		}
	}
	if _, _, err := c.run("account", "set", "fresh-02", "--portfolio", "nope"); !errors.Is(err, campaign.ErrNotFound) ||
		!strings.Contains(err.Error(), "portfolio add nope") {
		t.Errorf("joining an unknown portfolio: %v", err)
	}
	if _, _, err := c.run("portfolio", "add", "acme"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second acme: %v", err)
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]int{"250": 250, "2k": 2000, "2K": 2000, "10k": 10000, "100k": 100000,
		"unlimited": campaign.Unlimited, "TIER_2K": 2000, "TIER_UNLIMITED": campaign.Unlimited, "1500": 1500} {
		if got, err := campaign.ParseLimit(in); err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "2m", "1.5k", "k", "TIER_"} {
		if got, err := campaign.ParseLimit(bad); err == nil {
			t.Errorf("ParseLimit(%q) = %d, want an error", bad, got)
		}
	}
}

func TestReachErrorExitsCapped(t *testing.T) {
	var msg strings.Builder
	err := fmt.Errorf("campaign 3: %w", &dispatch.ReachError{Until: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)})
	if code := exitCode(err, &msg); code != ExitCapped {
		t.Errorf("exit %d, want %d", code, ExitCapped)
	}
	if !strings.Contains(msg.String(), "messaging limit") || !strings.Contains(msg.String(), "2026-12-02T09:00:00Z") {
		t.Errorf("printed %q, want the limit and when there is room", msg.String())
	}
}

func TestAccountThroughputFlag(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	_, errOut, err := c.run("account", "set", "main-01", "--throughput", "1000")
	if err != nil || !strings.Contains(errOut, "above the 80 msg/s") {
		t.Errorf("pinning 1000/s: %v, stderr %q; want a warning naming Meta's 80", err, errOut)
	}
	if a := c.status().Accounts[0]; a.Throughput != 1000 || a.ThroughputSource != "pinned" {
		t.Errorf("main-01 throughput %v from %s", a.Throughput, a.ThroughputSource)
	}
	if _, errOut, _ := c.run("account", "set", "main-01", "--throughput", "40"); strings.Contains(errOut, "above") {
		t.Errorf("pinning below Meta's figure warned: %q", errOut)
	}
	c.ok("account", "set", "main-01", "--throughput", "0")
	if a := c.status().Accounts[1]; a.Throughput != 80 || a.ThroughputSource != "default" {
		t.Errorf("fresh-02 throughput %v from %s, want the default 80", a.Throughput, a.ThroughputSource)
	}
	c.usage("account", "set", "main-01", "--throughput", "fast")
	c.usage("account", "add", "x", "--phone-number-id", "9", "--throughput", "-3")
}
