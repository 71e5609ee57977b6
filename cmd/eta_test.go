package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/report"
)

// TestETAScheduledForTomorrow: a campaign imported with --at for tomorrow
// (issue 26: its ETA read "0 s", its --json finish came before its start).
// status, campaign list and campaign show, on the terminal and in --json,
// all give the one ETA: from tomorrow's start, counted from now.
func TestETAScheduledForTomorrow(t *testing.T) {
	c := newCLI(t)
	c.now = time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n+4915123456701\n+4915123456702\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("account", "add", "main", "--phone-number-id", "111", "--tier", "active", "--token-env", "T")
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", start.Format(time.RFC3339))

	check := func(what string, e *report.ETA) {
		t.Helper()
		if e == nil || e.Start == nil || e.Finish == nil {
			t.Fatalf("%s: ETA %+v, want a start and a finish", what, e)
		}
		if !e.Start.Equal(start) || e.Finish.Before(start) || e.Finish.After(start.Add(time.Minute)) {
			t.Errorf("%s: start %v finish %v, want the start %v and a finish within a minute of it", what, e.Start, e.Finish, start)
		}
		if left := e.Finish.Sub(c.now).Seconds(); e.Seconds != left || e.QuotaResets != 1 {
			t.Errorf("%s: %v s, %d resets; want %v s from now and 1 reset", what, e.Seconds, e.QuotaResets, left)
		}
		if !strings.HasPrefix(e.Text, "about 14 h ") || !strings.Contains(e.Text, "starts 2026-12-01 09:00 UTC") {
			t.Errorf("%s: %q, want about 14 h, saying when it starts", what, e.Text)
		}
	}
	check("status --json", c.status().Campaigns[0].ETA)
	var camps []report.Campaign
	if err := json.Unmarshal([]byte(c.ok("campaign", "list", "--json")), &camps); err != nil {
		t.Fatal(err)
	}
	check("campaign list --json", camps[0].ETA)
	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	check("campaign show --json", show.ETA)

	// show says the ETA whole, on a terminal and piped.
	for _, tt := range []struct {
		tty  bool
		args []string
	}{{false, []string{"campaign", "show", "1"}}, {true, []string{"campaign", "show", "1"}}} {
		c.tty = tt.tty
		if out := c.ok(tt.args...); !strings.Contains(out, "about 14 h 0 min (starts 2026-12-01 09:00 UTC; needs 1 quota reset)") {
			t.Errorf("%s (tty %v) does not show the ETA:\n%s", strings.Join(tt.args, " "), tt.tty, out)
		}
	}
	// The tables' ETA cell is the time left alone, on a terminal and piped,
	// never cut ("about 14 h 0 min (…" said nothing): the state says when it
	// starts, show and --json the rest.
	for _, tty := range []bool{true, false} {
		c.tty = tty
		for _, args := range [][]string{{"status"}, {"campaign", "list"}} {
			out := c.ok(args...)
			if !strings.Contains(out, "about 14 h 0 min") || strings.Contains(out, "…") || strings.Contains(out, "needs 1 quota reset") {
				t.Errorf("%s (tty %v): want the ETA cell \"about 14 h 0 min\" alone:\n%s", strings.Join(args, " "), tty, out)
			}
		}
	}
}

// TestCampaignShowETAFits80: on a terminal of 80 columns show's ETA (and
// any value too long for its line) wraps under the value's column, not
// under the label as the terminal's own wrap would.
func TestCampaignShowETAFits80(t *testing.T) {
	c := newCLI(t)
	c.now = time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n+4915123456701\n+4915123456702\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("account", "add", "main", "--phone-number-id", "111", "--tier", "active", "--token-env", "T")
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", "2026-12-01T09:00:00Z")
	c.tty, c.width = true, 80
	out := strings.ReplaceAll(c.ok("campaign", "show", "1"), list, "LIST")
	out = strings.ReplaceAll(out, c.db, "DB")
	goldenFile(t, "campaign_show_eta_80.golden", out)
	for _, l := range strings.Split(out, "\n") {
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("%d columns: %q", w, l)
		}
	}
	if want := "ETA:           about 14 h 0 min (starts 2026-12-01 09:00 UTC; needs 1 quota\n               reset)\n"; !strings.Contains(out, want) {
		t.Errorf("no ETA wrapped under its value:\n%s", out)
	}
}
