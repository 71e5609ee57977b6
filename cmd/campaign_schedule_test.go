package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestImportWithSchedule(t *testing.T) {
	c := newCLI(t)
	list := filepath.Join(t.TempDir(), "flash.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n+4915123456701\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("campaign", "import", list, "--text", "Hi", "--at", "2026-12-01T09:00", "--expire-after", "48h")

	s := c.status()
	if len(s.Campaigns) != 1 {
		t.Fatalf("%d campaigns", len(s.Campaigns))
	}
	cj := s.Campaigns[0]
	want := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) // WASEND_TZ=UTC
	if cj.State != "scheduled" || cj.StartAt == nil || !cj.StartAt.Equal(want) || cj.ExpiresAt != nil {
		t.Errorf("status: state %q, start %v, expires %v; want scheduled for %v, no expiry before the start",
			cj.State, cj.StartAt, cj.ExpiresAt, want)
	}
	c.tty = true
	if out := c.ok("status"); !strings.Contains(out, "scheduled for 2026-12-01 09:00 UTC") {
		t.Errorf("status on a terminal does not say when it starts:\n%s", out)
	}
	if out := c.ok("campaign", "show", "1"); !strings.Contains(out, "starts 2026-12-01 09:00:00 UTC; pending rows expire 48h0m0s after the start") {
		t.Errorf("show does not give the schedule:\n%s", out)
	}
	c.tty = false
	if out := c.ok("campaign", "show", "1"); !strings.Contains(out, "state\tscheduled\n") || !strings.Contains(out, "expire_after_seconds\t172800\n") {
		t.Errorf("piped show:\n%s", out)
	}

	// Once the start has passed the campaign shows as running again.
	c.now = want.Add(time.Minute)
	if s := c.status(); s.Campaigns[0].State != "running" {
		t.Errorf("after the start: state %q", s.Campaigns[0].State)
	}

	// The same import again with a new start moves it.
	c.ok("campaign", "import", list, "--text", "Hi", "--at", "+3h")
	if s := c.status(); s.Campaigns[0].StartAt == nil || !s.Campaigns[0].StartAt.Equal(c.now.Add(3*time.Hour)) {
		t.Errorf("after a second import with --at +3h: start %v", s.Campaigns[0].StartAt)
	}
}

func TestScheduleFlagErrors(t *testing.T) {
	c := newCLI(t)
	list := filepath.Join(t.TempDir(), "l.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--at", "tomorrow"}, `--at "tomorrow": want +DURATION`},
		{[]string{"--at", "+-1h"}, `--at "+-1h"`},
		{[]string{"--expire-after", "0s"}, `--expire-after "0s": must be more than zero`},
		{[]string{"--expire-after", "2 days"}, `--expire-after "2 days": want a duration`},
	} {
		msg := c.usage(append([]string{"campaign", "import", list, "--text", "Hi"}, tc.flags...)...)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.flags, msg, tc.want)
		}
	}
	if s := c.status(); len(s.Campaigns) != 0 {
		t.Errorf("a refused import stored %d campaigns", len(s.Campaigns))
	}
}
