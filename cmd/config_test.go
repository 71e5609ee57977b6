package cmd

import (
	"strings"
	"testing"
	"time"
)

// TestQuotaResetZone: cron (no WASEND_TZ) resets at UTC midnight; an hour
// later a shell with WASEND_TZ=America/New_York — still yesterday there —
// is refused instead of opening a second quota day, and a clock stepped
// back opens nothing. `config set timezone` changes the zone deliberately.
func TestQuotaResetZone(t *testing.T) {
	c := newCLI(t)
	delete(c.env, "WASEND_TZ")
	c.addAccounts() // the first use fixes the zone: the local one, without WASEND_TZ
	if got := c.ok("config", "get", "timezone"); got != "UTC\n" && got != "Etc/UTC\n" {
		t.Fatalf("config get timezone = %q, want the local zone", got)
	}
	c.ok("config", "set", "timezone", "UTC")

	c.now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got := c.ok("quota", "reset"); strings.Count(got, "new quota day 2026-12-01") != 2 {
		t.Fatalf("cron reset at midnight:\n%s", got)
	}

	c.now = c.now.Add(time.Hour)
	c.env["WASEND_TZ"] = "America/New_York"
	for _, args := range [][]string{{"quota", "reset"}, {"quota", "reset", "--force"}} {
		out, _, err := c.run(args...)
		if err == nil || out != "" {
			t.Fatalf("wasend %s with another WASEND_TZ: %q, %v; want it refused", strings.Join(args, " "), out, err)
		}
		for _, want := range []string{"WASEND_TZ=America/New_York", "UTC", "wasend config set timezone America/New_York"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
		}
	}
	delete(c.env, "WASEND_TZ")
	if got := c.ok("quota", "reset"); strings.Count(got, "already reset on 2026-12-01") != 2 {
		t.Errorf("plain reset an hour later:\n%s", got)
	}

	c.now = time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC) // the clock stepped back
	got := c.ok("quota", "reset")
	if strings.Count(got, "quota day 2026-12-01 is still open") != 2 || strings.Contains(got, "new quota day") {
		t.Errorf("reset on a clock set back:\n%s", got)
	}
	if got := c.ok("quota", "reset", "--account", "fresh-02", "--force"); !strings.Contains(got, "fresh-02: count reset on quota day 2026-12-01") {
		t.Errorf("forced reset on a clock set back:\n%s", got)
	}
	for _, a := range c.status().Accounts {
		if a.QuotaDay != "2026-12-01" {
			t.Errorf("%s: quota_day %q, want 2026-12-01: days never move back", a.Name, a.QuotaDay)
		}
	}

	c.now = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC) // 20:00 on Dec 1 in New York
	if got := c.ok("config", "set", "timezone", "America/New_York"); !strings.Contains(got, "America/New_York (was UTC)") {
		t.Errorf("config set timezone:\n%s", got)
	}
	c.env["WASEND_TZ"] = "America/New_York"
	if got := c.ok("quota", "reset"); strings.Count(got, "already reset on 2026-12-01") != 2 {
		t.Errorf("reset in the new zone, same day there:\n%s", got)
	}
}

func TestConfigSetRejects(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"config", "set", "timezone", "Mars/Olympus"},
		{"config", "set", "timezone", "Local"},
		{"config", "set", "colour", "blue"},
		{"config", "get", "colour"},
		{"config", "set", "timezone"},
	} {
		if msg := c.usage(args...); msg == "" {
			t.Errorf("wasend %s: empty message", strings.Join(args, " "))
		}
	}
	if got := c.ok("config", "get", "timezone"); got != "UTC\n" {
		t.Errorf("zone %q after rejected changes, want UTC (WASEND_TZ of the first use)", got)
	}
}
