package cmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestQuietKeepsResultsAndErrors holds what -q keeps: the results on
// stdout (a run's summary line) and errors with their exit code; the
// progress, notes, warnings, hints and log lines below error go.
func TestQuietKeepsResultsAndErrors(t *testing.T) {
	c := newCLI(t)
	list := writePreflightList(t, "three.csv", 0, 3)
	run := []string{"--sandbox", "campaign", "run", list, "--params", "name,name"}
	loudOut, loudErr, err := c.run(run...)
	if err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, loudErr)
	}
	for _, w := range []string{"warning: SANDBOX", "See it with: wasend status"} {
		if !strings.Contains(loudErr, w) {
			t.Fatalf("without -q the run does not print %q, so -q proves nothing:\n%s", w, loudErr)
		}
	}

	c.db = t.TempDir() + "/quiet.db"
	out, errOut, err := c.run(append([]string{"-q"}, run...)...)
	if err != nil {
		t.Fatalf("-q sandbox run: %v\n%s", err, errOut)
	}
	if errOut != "" {
		t.Errorf("-q: stderr %q, want nothing (no warning, hint, note or progress)", errOut)
	}
	if !strings.HasPrefix(out, "campaign 1 finished: ") || strings.Count(out, "\n") != strings.Count(loudOut, "\n") {
		t.Errorf("-q: stdout %q, want the results as without it: %q", out, loudOut)
	}

	// A warning of status goes too; its tables stay.
	c.ok("--sandbox", "campaign", "import", writePreflightList(t, "more.csv", 10, 2), "--params", "name,name")
	c.ok("--sandbox", "campaign", "pause", "2")
	if _, errOut, _ := c.run("--sandbox", "status"); !strings.Contains(errOut, "warning: ") {
		t.Fatalf("status of a paused campaign warns of nothing, so -q proves nothing:\n%s", errOut)
	}
	if out, errOut, err := c.run("-q", "--sandbox", "status"); err != nil || errOut != "" || !strings.Contains(out, "paused") {
		t.Errorf("-q status: %v\nstdout %q\nstderr %q; want the tables and no warning", err, out, errOut)
	}

	// Errors stay, with their exit code.
	if _, _, err = c.run("-q", "--sandbox", "campaign", "show", "99"); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("-q show of a missing campaign: %v, want not found", err)
	}
	code, msg := c.exit("-q", "--sandbox", "campaign", "show", "99")
	if code != ExitError || !strings.Contains(msg, "error: ") {
		t.Errorf("-q show of a missing campaign: exit %d, stderr %q; want exit %d and the error", code, msg, ExitError)
	}
}

// TestQuietDropsWarningsAndLog: an account the preflight leaves out is a
// warning, one a send stops a log line at warn level, and the campaign that
// pauses for want of accounts a hint; -q prints none of them, and the run
// ends the same (its error, which Main prints, and its summary).
func TestQuietDropsWarningsAndLog(t *testing.T) {
	const expired = "EAAG-expired"
	for _, quiet := range []bool{false, true} {
		c, _ := preflightCLI(t, sandbox.Options{PairInterval: -1, Faults: sandbox.Faults{BadTokens: []string{expired},
			FatalAccounts: map[string]sandbox.FatalAccount{"1234567890": {Code: 131031, After: 1}}}}, nil)
		c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "good", expired
		args := []string{"campaign", "run", writePreflightList(t, "promo.csv", 0, 2), "--text", "hi", "--ignore-window"}
		if quiet {
			args = append([]string{"-q"}, args...)
		}
		out, errOut, err := c.run(args...)
		if !errors.Is(err, campaign.ErrPaused) {
			t.Fatalf("run (quiet %v): %v, want paused: no usable account left\n%s", quiet, err, errOut)
		}
		if !strings.HasPrefix(out, "campaign 1 ") {
			t.Errorf("run (quiet %v): stdout %q, want the summary", quiet, out)
		}
		switch {
		case !quiet && (!strings.Contains(errOut, "LEFT OUT") || !strings.Contains(errOut, "level=WARN") || !strings.Contains(errOut, "See why with")):
			t.Fatalf("without -q no warning and no warn log line, so -q proves nothing:\n%s", errOut)
		case quiet && errOut != "":
			t.Errorf("-q: stderr %q, want nothing", errOut)
		}
	}
}
