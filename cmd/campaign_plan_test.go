package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/report"
)

// planCSV writes 40 usable recipients, one invalid number and one duplicate.
func planCSV(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "+49151%08d,P%d\n", 10000000+i, i)
	}
	b.WriteString("12,Bad\n+4915110000000,Again\n")
	path := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCampaignPlan(t *testing.T) {
	c := newCLI(t)
	c.addAccounts() // main-01 active (15, 1/5 s, 300), fresh-02 new (5, 1/12 s, 50)
	csv := planCSV(t)
	// 20 go at once; then main every 5 s and fresh every 12 s: the 40th is
	// fresh's 6th, 72 s in. One more new account adds 5 at once and 1/12 s:
	// 45 s. One more warm (8, 1/8 s): 15 + 5 + 8 at once, then 12 more by 32 s.
	// One more active: 35 at once, 5 more by 12 s (main's 2 and the extra's
	// 2 at 10 s, fresh's 1 at 12 s).
	out := c.ok("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--start", "2026-11-30T23:50:00Z")
	want := `kind=recipients count=40 skipped=2
kind=phone_column column=phone named=false unused=""
kind=start at="2026-11-30 23:50:00 UTC"
kind=finish at="2026-11-30 23:51:12 UTC" seconds=72 text="about 1 min" quota_resets=0
kind=account account=main-01 tier=active messages=29 share=72.5%
kind=account account=fresh-02 tier=new messages=11 share=27.5%
kind=one_more tier=new finish="2026-11-30 23:50:45 UTC" sooner="27 s"
kind=one_more tier=warm finish="2026-11-30 23:50:32 UTC" sooner="40 s"
kind=one_more tier=active finish="2026-11-30 23:50:12 UTC" sooner="about 1 min"
`
	if out != want {
		t.Errorf("campaign plan:\n%s\nwant:\n%s", out, want)
	}

	// Nothing was stored.
	if s := c.status(); len(s.Campaigns) != 0 {
		t.Errorf("plan stored campaigns: %+v", s.Campaigns)
	}

	// Ten minutes before midnight with fresh-02 alone, 60 recipients need
	// a quota reset: 50 by 23:59, 5 at midnight, 5 by 00:01.
	var p report.Plan
	out = c.ok("campaign", "plan", csv, "--text", "Hi {{name}}", "--ignore-window", "--accounts", "fresh-02", "--start", "2026-11-30T23:50:00Z", "--json")
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.Recipients != 40 || len(p.Accounts) != 1 || p.Accounts[0].Sent != 40 || p.Finish == nil || p.QuotaResets != 0 {
		t.Errorf("plan --accounts fresh-02: %+v", p)
	}
	if want := time.Date(2026, 11, 30, 23, 57, 0, 0, time.UTC); !p.Finish.Equal(want) {
		t.Errorf("fresh-02 alone finishes %v, want %v", p.Finish, want) // 5 at once, 35 × 12 s
	}

	c.ok("account", "set", "fresh-02", "--daily-cap", "30")
	out = c.ok("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--accounts", "fresh-02", "--start", "2026-11-30T23:50:00Z", "--json")
	p = report.Plan{}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	// 30 by 23:55:00, then 5 at midnight and 5 × 12 s.
	if want := time.Date(2026, 12, 1, 0, 1, 0, 0, time.UTC); p.Finish == nil || !p.Finish.Equal(want) || p.QuotaResets != 1 {
		t.Errorf("capped plan: finish %v, %d resets; want %v, 1", p.Finish, p.QuotaResets, want)
	}

	c.ok("account", "set", "fresh-02", "--daily-cap", "0")
	out = c.ok("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--accounts", "fresh-02", "--start", "now")
	if !strings.Contains(out, `kind=finish at=never reason="every account's daily cap is 0"`) {
		t.Errorf("zero cap plan:\n%s", out)
	}

	if msg := c.usage("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--start", "tomorrow"); !strings.Contains(msg, "RFC 3339") {
		t.Errorf("bad --start: %s", msg)
	}
	if _, _, err := c.run("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--accounts", "nobody"); err == nil || !strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("unknown account: %v", err)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                             "at once",
		27 * time.Second:              "27 s",
		72 * time.Second:              "about 1 min",
		3*time.Hour + 20*time.Minute:  "about 3 h 20 min",
		52*time.Hour + 10*time.Minute: "about 2 d 4 h",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestCampaignPlanGolden keeps the plan's terminal and piped forms in
// golden files. Rewrite with: go test ./cmd -run TestCampaignPlanGolden -update
func TestCampaignPlanGolden(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	csv := planCSV(t)
	for _, tt := range []struct {
		name string
		tty  bool
	}{{"campaign_plan_tty.golden", true}, {"campaign_plan_piped.golden", false}} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty = t, tt.tty
			out := c.ok("campaign", "plan", csv, "--template", "t", "--lang", "en_US", "--start", "2026-11-30T23:50:00Z")
			goldenFile(t, tt.name, out)
		})
	}
}

// TestCampaignPlanWindowGolden: a plan with a scheduled start and a send
// window — 20 numbers in Berlin, 20 in New York (one by its tz column),
// a Tuesday 08:30 UTC start: Berlin's window is open, New York's opens at
// 14:00 UTC. Rewrite with: go test ./cmd -run TestCampaignPlanWindowGolden -update
func TestCampaignPlanWindowGolden(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	var b strings.Builder
	b.WriteString("phone,name,tz\n")
	for i := range 20 {
		fmt.Fprintf(&b, "+49151%08d,P%d,\n", 10000000+i, i)
	}
	for i := range 19 {
		fmt.Fprintf(&b, "+1212555%04d,Q%d,\n", 1000+i, i)
	}
	b.WriteString("+4915120000000,R,America/New_York\n+4915120000001,S,Mars/Base\n")
	csv := filepath.Join(t.TempDir(), "zones.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		tty  bool
		args []string
	}{
		{"campaign_plan_window_tty.golden", true, nil},
		{"campaign_plan_window_piped.golden", false, nil},
		{"campaign_plan_window_json.golden", false, []string{"--json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty = t, tt.tty
			out := c.ok(append([]string{"campaign", "plan", csv, "--text", "Hi {{name}}", "--ignore-window", "--at", "2026-12-01T08:30",
				"--send-window", "09:00-20:00", "--days", "mon-fri"}, tt.args...)...)
			goldenFile(t, tt.name, strings.ReplaceAll(out, csv, "<csv>"))
		})
	}
	if msg := c.usage("campaign", "plan", csv, "--text", "Hi", "--ignore-window", "--at", "+1h", "--start", "2026-12-01T08:00:00Z"); !strings.Contains(msg, "--at and --start") {
		t.Errorf("--at with --start: %q", msg)
	}
}
