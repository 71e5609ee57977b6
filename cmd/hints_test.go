package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
	"github.com/wasend/wasend/internal/ui"
)

// When every account is capped, the advice is true: a plain `quota reset`
// does nothing on the day it ran, so the message names when the next quota
// day opens and the --force that opens one now.
func TestCappedHint(t *testing.T) {
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--daily-cap", "1")
	}
	_, errOut, err := c.run("campaign", "run", "--sandbox", "--stop-when-capped", "../testdata/recipients.csv")
	if code := exitCode(err, &strings.Builder{}); code != ExitCapped {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, ExitCapped, errOut)
	}
	for _, want := range []string{"next quota day from 12-01 00:00 UTC", "or now with:\n  wasend quota reset --force --db " + c.db + " --sandbox\n",
		"wasend campaign run --resume 1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	// Pasted, each command line reaches the same (sandbox) database.
	flags := " --db " + c.db + " --sandbox"
	for _, want := range []string{"wasend campaign run --resume 1" + flags + "\n",
		"See it with: wasend status" + flags + "\nor: wasend campaign show 1" + flags + "\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "It continues after `wasend quota reset`") {
		t.Errorf("the untrue hint is back:\n%s", errOut)
	}
}

// The exit-3 hint counts the next quota day in the database's zone of
// quota days, the zone cron's reset goes by: not WASEND_TZ's (UTC here),
// nor local time.
func TestCappedHintQuotaZone(t *testing.T) {
	c := newCLI(t)
	c.ok("config", "set", "timezone", "America/New_York")
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--daily-cap", "1")
	}
	_, errOut, err := c.run("campaign", "run", "--sandbox", "--stop-when-capped", "../testdata/recipients.csv")
	if code := exitCode(err, &strings.Builder{}); code != ExitCapped {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, ExitCapped, errOut)
	}
	// 14:00 UTC on 11-30 is 09:00 in New York: its next midnight.
	if want := "next quota day from 12-01 00:00 EST"; !strings.Contains(errOut, want) {
		t.Errorf("no %q in:\n%s", want, errOut)
	}
}

// Each message names what went wrong once, and where.
func TestMessages(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
		not   string
	}{
		{name: "a directory as the recipient file", args: []string{"campaign", "check", dir, "--text", "hi", "--ignore-window"},
			want: "recipient file " + dir + " is a directory; give a CSV file", not: "read " + dir},
		{name: "export into a directory that is not there", args: []string{"campaign", "export", "1", "--out", "/nodir/x.csv"},
			want: "--out /nodir/x.csv: directory /nodir does not exist", not: ".tmp"},
		{name: "a file with --resume", args: []string{"campaign", "run", "--resume", "7", "extra.csv"}, usage: true,
			want: `campaign run --resume 7: "extra.csv" is not expected with --resume`},
		{name: "an unknown shell", args: []string{"completion", "powershellz"}, usage: true,
			want: `unknown command "powershellz" for "wasend completion"`},
	}
	seedCampaign(t, c.db)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			var msg string
			if tt.usage {
				msg = c.usage(tt.args...)
			} else {
				_, _, err := c.run(tt.args...)
				if err == nil {
					t.Fatalf("%v succeeded", tt.args)
				}
				msg = err.Error()
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("%q, want %q", msg, tt.want)
			}
			if tt.not != "" && strings.Contains(msg, tt.not) {
				t.Errorf("%q has %q", msg, tt.not)
			}
		})
	}
}

// --sandbox reads as a plain switch in help: no argument name made of the
// words `campaign run`.
func TestSandboxFlagHelp(t *testing.T) {
	c := newCLI(t)
	out := c.ok("status", "--help")
	if strings.Contains(out, "--sandbox campaign run") {
		t.Errorf("help shows --sandbox with an argument:\n%s", out)
	}
	if !strings.Contains(out, "--sandbox ") {
		t.Errorf("no --sandbox in help:\n%s", out)
	}
}

// After the demo, the way to see it; and `status` on an empty default
// database points at the demo's own.
func TestSandboxHints(t *testing.T) {
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--rate", "1000", "--burst", "100")
	}
	_, errOut, err := c.run("campaign", "run", "--sandbox", "../testdata/recipients.csv", "--log-level", "error")
	if err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, errOut)
	}
	if want := "See it with: wasend status --db " + c.db; !strings.Contains(errOut, want) {
		t.Errorf("no %q after the demo:\n%s", want, errOut)
	}

	xdg := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": xdg, "WASEND_TZ": "UTC"}
	// status's stderr and error: with no default database, the error says
	// where the demo's is.
	statusErr := func() string {
		var out, errOut bytes.Buffer
		f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(env), Now: time.Now}
		root := NewRootCmd(f)
		root.SetArgs([]string{"status"})
		if err := root.Execute(); err != nil {
			return errOut.String() + err.Error()
		}
		return errOut.String()
	}
	const hint = "wasend status --sandbox"
	if got := statusErr(); strings.Contains(got, hint) {
		t.Errorf("a hint with no sandbox database: %q", got)
	}
	if err := os.MkdirAll(filepath.Join(xdg, "wasend"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "wasend", "sandbox.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := statusErr(); !strings.Contains(got, hint) || !strings.Contains(got, "does not exist") {
		t.Errorf("status on no database beside the sandbox's: %q, want %q", got, hint)
	}
	if err := os.WriteFile(filepath.Join(xdg, "wasend", "wasend.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := statusErr(); !strings.Contains(got, hint) || strings.Contains(got, "does not exist") {
		t.Errorf("status on an empty database beside the sandbox's: %q, want %q", got, hint)
	}
}

// Ctrl-C talks about requests in flight only while a command sends; in
// `status --watch` or `sandbox serve` there are none.
func TestInterruptMessage(t *testing.T) {
	for _, sends := range []bool{false, true} {
		var errOut syncWriter
		f := &Factory{IO: ui.Test(&bytes.Buffer{}, &errOut)}
		f.sends.Store(sends)
		ctx, stop := interruptContext(f)
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("SIGINT did not cancel the context")
		}
		stop()
		got := errOut.String()
		if mentions := strings.Contains(got, "in flight"); mentions != sends {
			t.Errorf("sending %v: %q", sends, got)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// Shell completion offers the campaign ids, account names, tiers and
// templates in the database.
func TestShellCompletion(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"campaign", "show", ""}, []string{"1\tspring.csv (paused)"}},
		{[]string{"campaign", "failed", ""}, []string{"1\tspring.csv (paused)"}},
		{[]string{"campaign", "run", "--resume", ""}, []string{"1\tspring.csv (paused)"}},
		{[]string{"account", "set", ""}, []string{"main-01\tactive", "fresh-02\tnew"}},
		{[]string{"account", "set", "main-01", "--tier", ""}, []string{"new\t", "warm\t", "active\t"}},
		{[]string{"tier", "set", ""}, []string{"new\t", "active\t"}},
		{[]string{"quota", "reset", "--account", ""}, []string{"main-01", "fresh-02"}},
		{[]string{"campaign", "run", "x.csv", "--template", ""}, []string{"spring_sale"}},
	} {
		out := c.ok(append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("completing %q: no %q in\n%s", tt.args, w, out)
			}
		}
	}
	// Completion never creates a database.
	c.db = filepath.Join(t.TempDir(), "none.db")
	c.ok("__complete", "campaign", "show", "")
	if _, err := os.Stat(c.db); err == nil {
		t.Error("completion created a database")
	}
}

// check, import, plan and preview take `campaign run`'s command line: the
// sending flags are ignored with a note, not refused.
func TestRunFlagsAccepted(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	send := []string{"--workers", "50", "--max-attempts", "3", "--stop-when-capped", "--name", "spring"}
	for _, verb := range []string{"check", "import", "plan", "preview"} {
		args := append([]string{"campaign", verb, "../testdata/recipients.csv", "--text", "Hi {{name}}", "--ignore-window", "--region", "DE"}, send...)
		out, errOut, err := c.run(args...)
		if err != nil {
			t.Errorf("campaign %s with the run flags: %v\n%s%s", verb, err, out, errOut)
			continue
		}
		want := "note: campaign " + verb + " ignores --max-attempts"
		if !strings.Contains(errOut, want) || !strings.Contains(errOut, "--stop-when-capped, --workers (they apply to sending") {
			t.Errorf("campaign %s: no %q in\n%s", verb, want, errOut)
		}
		if verb == "import" && strings.Contains(errOut, "--name") {
			t.Errorf("import's own --name called ignored:\n%s", errOut)
		}
		help := c.ok("campaign", verb, "--help")
		if strings.Contains(help, "--workers") {
			t.Errorf("campaign %s --help lists --workers", verb)
		}
	}
}

// campaign show, list and status agree on the true state: a campaign left
// "running" by a process that is gone is interrupted; with a live runner
// it is running.
func TestTrueStateEverywhere(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(time.Hour)
	st, err := store.Open(context.Background(), c.db, driver.Options{Now: func() time.Time { return c.now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := storetest.SetCampaignState(context.Background(), st.Path(), 1, campaign.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	states := func() []string {
		var show struct{ State string }
		if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--json")), &show); err != nil {
			t.Fatal(err)
		}
		var list []struct{ State string }
		if err := json.Unmarshal([]byte(c.ok("campaign", "list", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		return []string{show.State, list[0].State, c.status().Campaigns[0].State}
	}
	for _, s := range states() {
		if s != "interrupted" {
			t.Errorf("no live runner: %v, want interrupted everywhere", states())
			break
		}
	}
	if err := st.RegisterRunner(context.Background(), campaign.Runner{ID: "r", CampaignID: 1, Host: "h", PID: 1,
		StartedAt: c.now, HeartbeatAt: c.now}); err != nil {
		t.Fatal(err)
	}
	for _, s := range states() {
		if s != "running" {
			t.Errorf("a live runner: %v, want running everywhere", states())
			break
		}
	}
}

// A command line a hint prints works when pasted: it carries --db,
// --sandbox and --limits as given, never a password.
func TestHintFlagsCarryOver(t *testing.T) {
	tests := []struct {
		name string
		f    *Factory
		want string
	}{
		{name: "none", f: &Factory{}, want: ""},
		// What the environment gives, a pasted line inherits: not repeated.
		{name: "WASEND_DB and WASEND_LIMITS", f: &Factory{Getenv: mapEnv(map[string]string{
			"WASEND_DB": "/tmp/env.db", "WASEND_LIMITS": "redis://r:6379/0"})}, want: ""},
		{name: "WASEND_DB under --sandbox", f: &Factory{Sandbox: true, Getenv: mapEnv(map[string]string{"WASEND_DB": "/tmp/env.db"})},
			want: " --sandbox"},
		{name: "db", f: &Factory{DBPath: "/tmp/w.db"}, want: " --db /tmp/w.db"},
		{name: "db and sandbox", f: &Factory{DBPath: "/tmp/w.db", Sandbox: true}, want: " --db /tmp/w.db --sandbox"},
		{name: "sandbox", f: &Factory{Sandbox: true}, want: " --sandbox"},
		{name: "db with a space", f: &Factory{DBPath: "/tmp/my w's.db"}, want: ` --db '/tmp/my w'\''s.db'`},
		{name: "limits", f: &Factory{Limits: "redis://redis.internal:6379/0"}, want: " --limits redis://redis.internal:6379/0"},
		{name: "limits with a password", f: &Factory{Limits: "redis://app:s3cret@redis.internal:6379/0"},
			want: " --limits redis://app:xxxxx@redis.internal:6379/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dbHint(tt.f); got != tt.want {
				t.Errorf("dbHint = %q, want %q", got, tt.want)
			}
		})
	}
}

// Hints of other commands carry the flags too.
func TestOtherHintsCarryFlags(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	_, errOut, err := c.run("template", "list")
	if err != nil {
		t.Fatal(err)
	}
	if want := "`wasend template sync --db " + c.db + "`"; !strings.Contains(errOut, want) {
		t.Errorf("no %q in:\n%s", want, errOut)
	}
}
