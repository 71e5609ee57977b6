package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/ui"
)

// TestProgressLinesFit80: every plain progress line of a piped sandbox run
// — a stall's words, the line while it waits on caps, the last — is at most
// 80 columns: a pipe does not wrap, the terminal a cron log is read on does.
func TestProgressLinesFit80(t *testing.T) {
	c := newCLI(t)
	for _, tier := range []string{"new", "warm", "active"} {
		c.ok("tier", "set", tier, "--daily-cap", "1")
	}
	var out, errOut bytes.Buffer
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(c.env), Now: func() time.Time { return c.now }}
	root := NewRootCmd(f)
	root.SetArgs([]string{"--db", c.db, "campaign", "run", "--sandbox", "../testdata/recipients.csv"})
	// It waits on the caps until interrupted, as under cron.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := root.ExecuteContext(ctx); err == nil {
		t.Fatalf("a run waiting on caps ended by itself:\n%s", errOut.String())
	}
	// The lines that start with a timestamp are progress (the log's start
	// time=); a stall's words wrap onto lines indented by four.
	var progress, waits int
	for _, line := range strings.Split(errOut.String(), "\n") {
		if !strings.HasPrefix(line, "20") && !strings.HasPrefix(line, "    ") {
			continue
		}
		progress++
		if strings.Contains(line, "SANDBOX: ") && strings.Contains(line, "wait=capped") {
			waits++
		}
		if w := runewidth.StringWidth(line); w > 80 {
			t.Errorf("%d columns: %s", w, line)
		}
	}
	if progress < 3 || waits < 2 {
		t.Errorf("%d progress lines, %d saying wait=capped; want a stall's words, its line and the last:\n%s", progress, waits, errOut.String())
	}
}
