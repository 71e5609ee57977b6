package cmd

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestStatusWaitingForSharedLimits: a campaign whose live process waits for
// Redis shows "waiting for shared limits" in status and campaign show, and
// says why below; at 80 columns the campaigns table still fits (it wrapped:
// the state is long) and `campaign show` no longer says "running".
// Rewrite with: go test ./cmd -run TestStatusWaitingForSharedLimits -update
func TestStatusWaitingForSharedLimits(t *testing.T) {
	for _, lost := range []bool{false, true} {
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
		if err := st.RegisterRunner(context.Background(), campaign.Runner{ID: "runner-2", CampaignID: 1, Host: "h", PID: 1,
			StartedAt: now.Add(-time.Minute), HeartbeatAt: now.Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		db, err := sql.Open("sqlite3", c.db)
		if err != nil {
			t.Fatal(err)
		}
		reason, why := campaign.WaitLimits, "portfolio default: shared limits (Redis) unavailable: dial tcp 127.0.0.1:6390: connect: connection refused"
		if lost {
			reason, why = campaign.WaitLimitsLost, "the shared limits hold no state"
		}
		if _, err := db.Exec(`INSERT INTO gate_waits (campaign_id, since, seen, reason, error) VALUES (1, ?, ?, ?, ?)`,
			now.Add(-20*time.Second).UnixNano(), now.Add(-time.Second).UnixNano(), string(reason), why); err != nil {
			t.Fatal(err)
		}
		db.Close()
		c.now = now
		c.tty, c.width = true, 80
		wantWhy := map[bool]string{false: "Redis does not answer", true: "quota reset --force"}[lost]

		out, errOut, err := c.run("status")
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(out, "\n") {
			if w := runewidth.StringWidth(ansiRE.ReplaceAllString(line, "")); w > 80 {
				t.Errorf("status line %d is %d columns wide at 80: %q", i+1, w, line)
			}
		}
		if !strings.Contains(out, "waiting for shared limits") {
			t.Errorf("status does not show the state whole:\n%s", out)
		}
		if !strings.Contains(errOut, wantWhy) {
			t.Errorf("status does not say %q:\n%s", wantWhy, errOut)
		}
		if !lost {
			goldenFile(t, "status_limits_wait_80.golden", out+"--- stderr\n"+errOut)
		}

		// The ETA counts from when sending can go on, and says so.
		c.tty = false
		out, _, err = c.run("status", "--json")
		c.tty = true
		if err != nil {
			t.Fatal(err)
		}
		wantETA := map[bool]string{false: `after Redis answers"`, true: "after `quota reset --force`\""}[lost]
		if !strings.Contains(out, wantETA) {
			t.Errorf("status --json: the ETA does not say %q:\n%s", wantETA, out)
		}

		out, errOut, err = c.run("campaign", "show", "1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "State:         waiting for shared limits\n") {
			t.Errorf("campaign show does not say it waits for shared limits:\n%s", out)
		}
		if !strings.Contains(errOut, wantWhy) {
			t.Errorf("campaign show does not say %q:\n%s", wantWhy, errOut)
		}
	}
}

// The wait's text shows a portfolio's own note whole (its exact command,
// ending with the reader's flags in place of the note's placeholder), and
// an older note without one gets the general hint.
func TestLimitsWaitText(t *testing.T) {
	const flags = " --db w.db --limits redis://r:6379/0"
	tests := []struct {
		lost      bool
		why, want string
		noLimits  bool
	}{
		{lost: true, why: "portfolio p1: Redis holds no state for it; its accounts wait until `wasend quota reset --force --account a --limits URL` starts a quota day",
			want: "portfolio p1: Redis holds no state for it; its accounts wait until `wasend quota reset --force --account a" + flags + "` starts"},
		{lost: true, why: "the shared limits hold no state", want: "`wasend quota reset --force" + flags + "`"},
		// No limits URL given at all: the need for one in words, no placeholder.
		{lost: true, why: "the shared limits hold no state", noLimits: true,
			want: "`wasend quota reset --force --db w.db` (with --limits naming the shared Redis)"},
		{lost: false, why: "portfolio p2: shared limits (Redis) unavailable: i/o timeout", want: "Redis does not answer (portfolio p2: shared limits (Redis) unavailable: i/o timeout)"},
	}
	for _, tt := range tests {
		fl := flags
		if tt.noLimits {
			fl = " --db w.db"
		}
		got := limitsWaitText(tt.lost, "2026-03-02 09:00:00", tt.why, fl, !tt.noLimits)
		if strings.Contains(got, "URL`") {
			t.Errorf("limitsWaitText(%v, %q) = %q keeps the placeholder", tt.lost, tt.why, got)
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("limitsWaitText(%v, %q) = %q, want it to say %q", tt.lost, tt.why, got, tt.want)
		}
	}
}
