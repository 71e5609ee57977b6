package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/golden"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestDoctorGolden holds what doctor prints at 80 and 120 columns: a sandbox set-up
// where every check passes, and one where a token is refused, a variable
// unset, the WABA has no app subscribed, the API version has ended and the
// quota reset did not run.
func TestDoctorGolden(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, name, got string) {
		t.Helper()
		golden.Check(t, filepath.Join(wd, "..", "testdata", "golden", name), got)
	}
	t.Chdir(t.TempDir()) // a relative --db: the same path in every run
	t.Run("healthy", func(t *testing.T) {
		c := newCLI(t)
		c.db = "sandbox.db"
		c.emptyDB()
		c.ok("template", "sync", "--sandbox")
		c.tty, c.width = true, 80
		start := time.Now()
		out, errOut, err := c.run("doctor", "--sandbox")
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("doctor took %s against the sandbox, want under 3 s", took)
		}
		if err != nil || errOut != "" {
			t.Fatalf("doctor: %v\n%s%s", err, out, errOut)
		}
		check(t, "doctor_sandbox.golden", out)
		c.width = 120
		check(t, "doctor_sandbox_120.golden", c.ok("doctor", "--sandbox"))
	})

	t.Run("broken", func(t *testing.T) {
		box := sandbox.New(sandbox.Options{Faults: sandbox.Faults{BadTokens: []string{"expired-token"}}})
		box.SetSubscribed("900", false)
		srv := httptest.NewServer(box)
		t.Cleanup(srv.Close)
		c := newCLI(t)
		c.db = "broken.db"
		c.env["WASEND_API_BASE"] = srv.URL
		c.env["WA_TOKEN_MAIN"] = "expired-token"
		c.addAccounts()
		c.ok("account", "add", "third-03", "--phone-number-id", "3456789012", "--token-env", "WA_TOKEN_THIRD", "--waba-id", "900")
		c.env["WA_TOKEN_THIRD"] = "good-token"
		c.env["WASEND_API_VERSION"] = "v20.0"
		c.now = c.now.Add(48 * time.Hour)
		c.tty, c.width = true, 80
		out, _, err := c.run("doctor")
		var msg strings.Builder
		if code := exitCode(err, &msg); code != ExitError || !strings.Contains(msg.String(), "checks failed") {
			t.Errorf("exit %d (%s), want %d saying checks failed", code, msg.String(), ExitError)
		}
		check(t, "doctor_broken.golden", strings.ReplaceAll(out, srv.URL, "http://API"))
		c.width = 120
		out, _, _ = c.run("doctor")
		check(t, "doctor_broken_120.golden", strings.ReplaceAll(out, srv.URL, "http://API"))
	})
}

func TestDoctorJSON(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	out := c.ok("doctor", "--sandbox", "--json")
	var rep struct {
		Findings []struct {
			Check, Level, Summary, Fix string
			Details                    []string
		}
		Failures, Warnings int
		Verdict            string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The demo accounts' WABA has no templates synced yet: a warning with
	// the command that syncs them, with this run's flags.
	var found bool
	for _, f := range rep.Findings {
		if f.Check == "WABA templates" {
			found = true
			if f.Level != "warn" || f.Fix != "wasend template sync --db "+c.db+" --sandbox" || len(f.Details) == 0 {
				t.Errorf("templates finding %+v", f)
			}
		}
	}
	if !found || rep.Failures != 0 || rep.Warnings != 1 || !strings.Contains(rep.Verdict, "1 warned") {
		t.Errorf("report %+v", rep)
	}
	if got := c.ok("doctor", "--sandbox", "--jq", ".findings[] | select(.level != \"ok\") | .fix"); got != "wasend template sync --db "+c.db+" --sandbox\n" {
		t.Errorf("--jq: %q", got)
	}
}

// TestDoctorHintsRunWhenPasted pastes every fix doctor prints for a
// sandbox set-up whose templates were never synced, whose quota reset did
// not run for two days and whose WASEND_TZ is not the zone of quota days —
// as printed, in order, with no --db added — and wants each to succeed and
// doctor to pass after them.
func TestDoctorHintsRunWhenPasted(t *testing.T) {
	h := newHintRunner(t)
	db := filepath.Join(t.TempDir(), "wasend.db")
	h.ok("--db", db, "config", "set", "timezone", "UTC")
	h.ok("--db", db, "--sandbox", "doctor") // adds the demo accounts, quota day today
	h.now = h.now.Add(48 * time.Hour)
	h.env["WASEND_TZ"] = "Europe/Berlin"
	printed, err := h.run(t.Context(), "--db", db, "--sandbox", "doctor")
	if err != nil {
		t.Fatalf("doctor failed where it should only warn: %v\n%s", err, printed)
	}
	for _, want := range []string{"fix: wasend config set timezone Europe/Berlin --db ", "fix: wasend template sync --db ", "fix: wasend quota reset --db "} {
		if !strings.Contains(printed, want) {
			t.Errorf("no %q in:\n%s", want, printed)
		}
	}
	h.runHints(printed)
	after := h.ok("--db", db, "--sandbox", "doctor")
	if !strings.Contains(after, "ready to send: all 10 checks passed\n") {
		t.Errorf("after the fixes:\n%s", after)
	}
}
