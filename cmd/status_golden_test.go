package cmd

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
	"github.com/wasend/wasend/internal/ui"
)

// TestStatusGolden renders `status` for a terminal, a pipe and --json from
// a seeded database: a campaign with sent, failed, throttled, unknown,
// in-flight and pending rows, one account dropped, running again so it has
// an ETA. Rewrite with: go test ./cmd -run TestStatusGolden -update
func TestStatusGolden(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	now := showT0.Add(time.Hour)
	st, err := store.Open(context.Background(), c.db, driver.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SetCampaignState(context.Background(), st.Path(), 1, campaign.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	// A live process sends it: its runner beat a second ago.
	if err := st.RegisterRunner(context.Background(), campaign.Runner{ID: "runner-2", CampaignID: 1, Host: "h", PID: 1,
		StartedAt: now.Add(-time.Minute), HeartbeatAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	c.now = now
	for _, tt := range []struct {
		name  string
		tty   bool
		width int
		args  []string
	}{
		{"status_tty.golden", true, 0, nil},
		{"status_tty_80.golden", true, 80, nil},
		{"status_tty_120.golden", true, 120, nil},
		{"status_piped.golden", false, 80, nil},
		{"status_json.golden", false, 0, []string{"--json"}},
		{"campaign_list_80.golden", true, 80, []string{"campaign", "list"}},
		{"campaign_list_120.golden", true, 120, []string{"campaign", "list"}},
		{"campaign_list_piped.golden", false, 80, []string{"campaign", "list"}},
		{"campaign_failed_80.golden", true, 80, []string{"campaign", "failed", "1"}},
		{"campaign_failed_120.golden", true, 120, []string{"campaign", "failed", "1"}},
		{"campaign_failed_piped.golden", false, 80, []string{"campaign", "failed", "1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty, c.width = t, tt.tty, tt.width
			args := tt.args
			if len(args) == 0 || args[0] == "--json" {
				args = append([]string{"status"}, args...)
			}
			out, errOut, err := c.run(args...)
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if tt.tty && tt.width > 0 {
				for i, line := range strings.Split(out, "\n") {
					if w := runewidth.StringWidth(ansiRE.ReplaceAllString(line, "")); w > tt.width {
						t.Errorf("line %d is %d columns wide at %d: %q", i+1, w, tt.width, line)
					}
				}
			}
			if tt.tty {
				out += "--- stderr\n" + errOut
			}
			goldenFile(t, tt.name, strings.ReplaceAll(out, c.db, "<db>"))
		})
	}
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestStatusWatch: --watch prints the status again every interval until
// the context ends (Ctrl-C), and then exits cleanly.
func TestStatusWatch(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	var out, errOut bytes.Buffer
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(c.env), Now: time.Now}
	root := NewRootCmd(f)
	root.SetArgs([]string{"--db", c.db, "status", "--watch=50ms"})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("status --watch ended with %v, want a clean exit on Ctrl-C", err)
	}
	if n := strings.Count(out.String(), "main-01"); n < 2 {
		t.Errorf("status printed %d time(s) in 400ms at a 50ms interval, want several:\n%s", n, out.String())
	}
}

// TestStatusRecordsGolden: piped, status prints every table a terminal
// shows — accounts, their health, warm-up, the global limit, portfolios,
// campaigns and their delivery — each line a record naming its kind, and
// nothing else. The terminal form of the same database is beside it.
// Rewrite with: go test ./cmd -run TestStatusRecordsGolden -update
func TestStatusRecordsGolden(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(48 * time.Hour)
	at := showT0.Add(2 * time.Minute)
	c.ok("webhook", "import", statusFile(t,
		statusLine(t, "wamid.HBgL02", "read", "4915100000000", "", at.Add(time.Minute), 0),
		statusLine(t, "wamid.HBgL03", "delivered", "4915100000001", "", at, 0),
		statusLine(t, "wamid.HBgL04", "failed", "4915100000002", "", at, 131026)))
	c.ok("portfolio", "add", "acme", "--limit", "1000")
	c.ok("account", "set", "main-01", "--portfolio", "acme")
	c.ok("limit", "global", "--rate", "10", "--burst", "20")
	for _, tt := range []struct {
		name string
		tty  bool
	}{
		{"status_records_piped.golden", false},
		{"status_records_tty_120.golden", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t, c.tty, c.width = t, tt.tty, 120
			out, _, err := c.run("status")
			if err != nil {
				t.Fatal(err)
			}
			goldenFile(t, tt.name, strings.ReplaceAll(out, c.db, "<db>"))
			if tt.tty {
				return
			}
			kinds := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				kind, _, _ := strings.Cut(line, " ")
				if !strings.HasPrefix(kind, "kind=") {
					t.Errorf("line %q does not say its kind", line)
				}
				kinds[strings.TrimPrefix(kind, "kind=")] = true
			}
			for _, k := range []string{"account", "account_health", "warmup", "global_limit", "portfolio", "campaign", "campaign_delivery"} {
				if !kinds[k] {
					t.Errorf("no kind=%s record piped:\n%s", k, out)
				}
			}
		})
	}
}
