package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The next quota day is shown in both zones: a server whose midnight is
// not the quota day's says so, with the CRON_TZ that fixes it.
func TestNextQuotaDay(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		quota, local *time.Location
		want         string
		same         bool
	}{
		{"same zone", berlin, berlin, "next quota day starts 2026-12-01 00:00 CET (Europe/Berlin; midnight here too, Europe/Berlin)", true},
		{"quota zone west of the server", ny, berlin,
			"next quota day starts 2026-12-01 00:00 EST (America/New_York), which is 2026-12-01 06:00 CET here (Europe/Berlin): " +
				"cron fires at this server's midnight unless the crontab sets CRON_TZ=America/New_York", false},
		{"quota zone east of the server", berlin, time.UTC,
			"next quota day starts 2026-12-01 00:00 CET (Europe/Berlin), which is 2026-11-30 23:00 UTC here (UTC): " +
				"cron fires at this server's midnight unless the crontab sets CRON_TZ=Europe/Berlin", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := nextQuotaDay(now, tc.quota, tc.local)
			if got := n.text(); got != tc.want {
				t.Errorf("text:\n got %s\nwant %s", got, tc.want)
			}
			if n.SameMidnight != tc.same || !n.At.Equal(n.Local) {
				t.Errorf("same_midnight %v (want %v), at %v, local %v", n.SameMidnight, tc.same, n.At, n.Local)
			}
		})
	}
}

func TestQuotaResetSaysNextDay(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.now = c.now.Add(24 * time.Hour)
	_, errOut, err := c.run("quota", "reset")
	if err != nil || !strings.Contains(errOut, "next quota day starts 2026-12-02 00:00 UTC (UTC") {
		t.Errorf("quota reset: %v, stderr:\n%s\nwant the next quota day", err, errOut)
	}
	var got quotaResetJSON
	if err := json.Unmarshal([]byte(c.ok("quota", "reset", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.NextQuotaDay.Zone != "UTC" || !got.NextQuotaDay.At.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)) ||
		len(got.Accounts) != 2 || got.Accounts[0].Reset || got.Accounts[0].Day != "2026-12-01" {
		t.Errorf("quota reset --json = %+v", got)
	}
}

// A quota day the reset did not start is visible in status, with the
// command that starts it (carrying --db), and in --json.
func TestStatusWarnsQuotaResetOverdue(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	if _, errOut, _ := c.run("status"); strings.Contains(errOut, "quota reset did not run") {
		t.Errorf("status on the accounts' own quota day warns:\n%s", errOut)
	}
	c.now = c.now.Add(24 * time.Hour) // midnight passed, no reset
	_, errOut, err := c.run("status")
	want := "quota day 2026-11-30 is still open for main-01, fresh-02, but today is 2026-12-01 in the zone of quota days (UTC): " +
		"the quota reset did not run; start the day with `wasend quota reset --db " + c.db
	if err != nil || !strings.Contains(errOut, want) {
		t.Errorf("status: %v, stderr:\n%s\nwant:\n%s", err, errOut, want)
	}
	o := c.status().QuotaResetOverdue
	if o == nil || o.OpenDay != "2026-11-30" || o.Today != "2026-12-01" || len(o.Accounts) != 2 || o.Command != "wasend quota reset --db "+c.db {
		t.Errorf("status --json quota_reset_overdue = %+v", o)
	}
	c.ok("quota", "reset")
	if o := c.status().QuotaResetOverdue; o != nil {
		t.Errorf("after quota reset, quota_reset_overdue = %+v", o)
	}
}
