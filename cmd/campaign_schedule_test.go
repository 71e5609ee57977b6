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
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", "2026-12-01T09:00", "--expire-after", "48h")

	s := c.status()
	if len(s.Campaigns) != 1 {
		t.Fatalf("%d campaigns", len(s.Campaigns))
	}
	cj := s.Campaigns[0]
	want := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) // WASEND_TZ=UTC
	if cj.State != "scheduled" || cj.StartAt == nil || !cj.StartAt.Equal(want) || cj.ExpiresAt == nil || !cj.ExpiresAt.Equal(want.Add(48*time.Hour)) {
		t.Errorf("status: state %q, start %v, expires %v; want scheduled for %v, expiring 48h after it",
			cj.State, cj.StartAt, cj.ExpiresAt, want)
	}
	c.tty = true
	if out := c.ok("status"); !strings.Contains(out, "scheduled for 2026-12-01 09:00 UTC") {
		t.Errorf("status on a terminal does not say when it starts:\n%s", out)
	}
	if out := c.ok("campaign", "show", "1"); !strings.Contains(out, "starts 2026-12-01 09:00:00 UTC; pending rows expire 2026-12-03 09:00:00 UTC") {
		t.Errorf("show does not give the schedule:\n%s", out)
	}
	c.tty = false
	if out := c.ok("campaign", "show", "1"); !strings.Contains(out, "state\tscheduled\n") || !strings.Contains(out, "expire_after_seconds\t172800\n") {
		t.Errorf("piped show:\n%s", out)
	}

	// Once the start has passed the campaign shows as any other not yet sent.
	c.now = want.Add(time.Minute)
	if s := c.status(); s.Campaigns[0].State != "ready" {
		t.Errorf("after the start: state %q", s.Campaigns[0].State)
	}

	// The same import again with a new start moves it.
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", "+3h")
	if s := c.status(); s.Campaigns[0].StartAt == nil || !s.Campaigns[0].StartAt.Equal(c.now.Add(3*time.Hour)) ||
		s.Campaigns[0].ExpiresAt == nil || !s.Campaigns[0].ExpiresAt.Equal(c.now.Add(51*time.Hour)) {
		t.Errorf("after a second import with --at +3h: start %v, expires %v", s.Campaigns[0].StartAt, s.Campaigns[0].ExpiresAt)
	}
}

func TestScheduleFlagErrors(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
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
		msg := c.usage(append([]string{"campaign", "import", list, "--text", "Hi", "--ignore-window"}, tc.flags...)...)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.flags, msg, tc.want)
		}
	}
	if s := c.status(); len(s.Campaigns) != 0 {
		t.Errorf("a refused import stored %d campaigns", len(s.Campaigns))
	}
}

func TestImportWithSendWindow(t *testing.T) {
	c := newCLI(t)
	list := filepath.Join(t.TempDir(), "zones.csv")
	csv := "phone,tz\n" +
		"+4915123456700,\n" + // Berlin, by the number
		"+12125550123,Asia/Tokyo\n" + // the tz column wins
		"+4915123456701,Mars/Base\n" + // no such zone
		"+870773111632,\n" // no zone for the number, no --default-tz
	if err := os.WriteFile(list, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--send-window", "9-20", "--days", "mon-fri")
	s := c.status()
	cj := s.Campaigns[0]
	if cj.Total != 2 || cj.Skipped != 2 || cj.SendWindow != "09:00-20:00 mon,tue,wed,thu,fri" {
		t.Errorf("status: total %d, skipped %d, window %q", cj.Total, cj.Skipped, cj.SendWindow)
	}
	skipped := c.ok("campaign", "skipped", "1")
	for _, want := range []string{`time zone "Mars/Base": not an IANA time zone name`, "no time zone known for +870773111632: add a tz column (IANA name) or --default-tz"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped rows do not say %q:\n%s", want, skipped)
		}
	}

	// With --default-tz the number without a zone gets that one.
	c2 := newCLI(t)
	c2.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--send-window", "09:00-20:00", "--default-tz", "Europe/Lisbon")
	if cj := c2.status().Campaigns[0]; cj.Total != 3 || cj.Skipped != 1 {
		t.Errorf("with --default-tz: total %d, skipped %d; want 3 and 1", cj.Total, cj.Skipped)
	}
	c2.tty = true
	if out := c2.ok("campaign", "show", "1"); !strings.Contains(out, "sends 09:00-20:00 in each recipient's time zone") {
		t.Errorf("show does not give the window:\n%s", out)
	}
}

func TestSendWindowFlagErrors(t *testing.T) {
	c := newCLI(t)
	list := filepath.Join(t.TempDir(), "l.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--send-window", "9am-5pm"}, `--send-window: send window "9am-5pm"`},
		{[]string{"--send-window", "09:00-20:00", "--days", "weekdays"}, `"weekdays" is not a day`},
		{[]string{"--days", "mon-fri"}, "--days and --default-tz go with --send-window"},
		{[]string{"--send-window", "09:00-20:00", "--default-tz", "Berlin"}, `--default-tz: time zone "Berlin"`},
	} {
		msg := c.usage(append([]string{"campaign", "import", list, "--text", "Hi", "--ignore-window"}, tc.flags...)...)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want it to contain %q", tc.flags, msg, tc.want)
		}
	}
	// A window can't be added to a campaign imported without one.
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window")
	_, _, err := c.run("campaign", "import", list, "--text", "Hi", "--ignore-window", "--send-window", "09:00-20:00")
	if err == nil || !strings.Contains(err.Error(), "imported without a send window") {
		t.Errorf("window on an imported campaign: %v", err)
	}
}

func TestCampaignShareFlags(t *testing.T) {
	c := newCLI(t)
	list := filepath.Join(t.TempDir(), "l.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--priority", "high", "--weight", "3")
	cj := c.status().Campaigns[0]
	if cj.Priority != "high" || cj.Weight != 3 {
		t.Errorf("after import: priority %q, weight %d", cj.Priority, cj.Weight)
	}
	if out := c.ok("campaign", "show", "1"); !strings.Contains(out, "priority\thigh\n") || !strings.Contains(out, "borrow_seconds\t2\n") {
		t.Errorf("show:\n%s", out)
	}
	c.ok("campaign", "set", "1", "--priority", "low", "--borrow", "0")
	if cj := c.status().Campaigns[0]; cj.Priority != "low" || cj.Weight != 3 {
		t.Errorf("after set: priority %q, weight %d", cj.Priority, cj.Weight)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"campaign", "set", "1"}, "say what to change"},
		{[]string{"campaign", "set", "1", "--priority", "urgent"}, `priority "urgent": want high, normal or low`},
		{[]string{"campaign", "set", "1", "--weight", "-2"}, "--weight -2: must be between 1 and 1000"},
		{[]string{"campaign", "set", "1", "--borrow", "soon"}, `--borrow "soon"`},
	} {
		if msg := c.usage(tc.args...); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, msg, tc.want)
		}
	}
}

// check finds the rows a windowed import would skip for their zone.
func TestCheckWithSendWindow(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	list := filepath.Join(t.TempDir(), "zones.csv")
	if err := os.WriteFile(list, []byte("phone,tz\n+4915123456700,\n+4915123456701,Mars/Base\n+870773111632,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.ok("campaign", "check", list, "--text", "Hi", "--ignore-window", "--send-window", "09:00-20:00")
	for _, want := range []string{`time zone "Mars/Base"`, "no time zone known for +870773111632"} {
		if !strings.Contains(out, want) {
			t.Errorf("check does not say %q:\n%s", want, out)
		}
	}
	if out := c.ok("campaign", "check", list, "--text", "Hi", "--ignore-window"); strings.Contains(out, "Mars/Base") {
		t.Errorf("check without a window judged zones:\n%s", out)
	}
}

// TestExpireAfterCountsFromAt: --expire-after counts from --at, fixed at
// import, not from the first claim; running the same command again later
// does not start it again. Rows still pending past the deadline expire,
// and the sandbox is sent nothing.
func TestExpireAfterCountsFromAt(t *testing.T) {
	list := filepath.Join(t.TempDir(), "flash.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n+4915123456701\n+4915123456702\n+4915123456703\n+4915123456704\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The run's engine claims on the real clock: the whole schedule lies
	// in the past of it.
	imported := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour)
	start := imported.Add(30 * time.Minute)
	flags := []string{list, "--sandbox", "--text", "Hi", "--ignore-window", "--at", start.Format(time.RFC3339), "--expire-after", "1h"}
	relative := []string{list, "--sandbox", "--text", "Hi", "--ignore-window", "--at", "+30m", "--expire-after", "1h"}
	for _, tt := range []struct {
		name  string
		flags []string
		then  []string // run past the deadline, nothing claimed before it
	}{
		{"run --resume", flags, []string{"campaign", "run", "--resume", "1", "--sandbox"}},
		{"the same command again", flags, append([]string{"campaign", "run"}, flags...)},
		{"the same command again, --at +30m", relative, append([]string{"campaign", "run"}, relative...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.now = imported
			c.ok(append([]string{"campaign", "import"}, tt.flags...)...)
			s := c.status()
			if cj := s.Campaigns[0]; cj.ExpiresAt == nil || !cj.ExpiresAt.Equal(start.Add(time.Hour)) {
				t.Errorf("after import: expires %v, want %v (--at + --expire-after)", cj.ExpiresAt, start.Add(time.Hour))
			}
			c.now = start.Add(90 * time.Minute) // past the deadline; nothing was claimed yet
			if _, errOut, err := c.run(tt.then...); err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			s = c.status()
			cj := s.Campaigns[0]
			if cj.Sent != 0 || cj.Expired != 5 {
				t.Errorf("sent %d, expired %d; want all 5 expired at %v", cj.Sent, cj.Expired, start.Add(time.Hour))
			}
			if cj.ExpiresAt == nil || !cj.ExpiresAt.Equal(start.Add(time.Hour)) {
				t.Errorf("after the run: expires %v, want %v", cj.ExpiresAt, start.Add(time.Hour))
			}
		})
	}
}

// --at takes a wall clock as people say it, in $WASEND_TZ: now is Monday
// 2026-11-30 14:00 UTC, 15:00 in Berlin.
func TestImportAtWallClock(t *testing.T) {
	list := filepath.Join(t.TempDir(), "l.csv")
	if err := os.WriteFile(list, []byte("phone\n+4915123456700\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   string
		want time.Time
	}{
		{"09:00", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)}, // today's 09:00 is past in Berlin
		{"16:30", time.Date(2026, 11, 30, 15, 30, 0, 0, time.UTC)},
		{"tomorrow 09:00", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{"fri 09:00", time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)},
		{"Monday 09:00", time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.at, func(t *testing.T) {
			c := newCLI(t)
			c.env["WASEND_TZ"] = "Europe/Berlin"
			c.ok("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", tc.at)
			s := c.status()
			if len(s.Campaigns) != 1 || s.Campaigns[0].StartAt == nil || !s.Campaigns[0].StartAt.Equal(tc.want) {
				t.Fatalf("--at %q: campaigns %+v, want one starting %v", tc.at, s.Campaigns, tc.want)
			}
			if s.Campaigns[0].State != "scheduled" {
				t.Errorf("--at %q: state %q, want scheduled", tc.at, s.Campaigns[0].State)
			}
		})
	}
	c := newCLI(t)
	c.emptyDB()
	msg := c.usage("campaign", "import", list, "--text", "Hi", "--ignore-window", "--at", "next week")
	for _, want := range []string{`--at "next week"`, "+2h", "tomorrow HH:MM", "mon 09:00", "2026-12-01T09:00", "RFC 3339", "in UTC"} {
		if !strings.Contains(msg, want) {
			t.Errorf("--at next week: %q does not name %q", msg, want)
		}
	}
	// plan's --start reads the same forms.
	c.addAccounts()
	out := c.ok("campaign", "plan", list, "--text", "Hi", "--ignore-window", "--start", "tomorrow 08:00", "--json")
	if !strings.Contains(out, `"start": "2026-12-01T08:00:00Z"`) {
		t.Errorf("plan --start tomorrow 08:00:\n%s", out)
	}
}
