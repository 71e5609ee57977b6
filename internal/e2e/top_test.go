//go:build walkthrough

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestTopInTmux runs the built binary's `top` in a real terminal of 80×24
// (tmux) beside a `campaign run` that sends: the dashboard shows the
// campaign running, p pauses it (the run stops with its exit code for a
// pause), the screen says paused, and q ends top with exit status 0. No
// line of the dashboard is wider than the terminal.
//
// Run it with: go test -tags walkthrough -count=1 -run TestTopInTmux ./internal/e2e/
func TestTopInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the terminal test needs tmux (.ci/run installs it)")
	}
	w := newWorld(t, sandbox.Options{})
	w.addAccounts(account{"main-01", "1234567890", "new"})
	csv := w.WriteCSV("spring.csv", 4915100000000, 200)
	run := w.Start("campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")
	w.WaitFor(30*time.Second, "the run's first sends", func() bool {
		cs := w.campaigns()
		return len(cs) == 1 && cs[0].Sent > 0 && cs[0].State == "running"
	})

	tm := &tmuxShell{sock: filepath.Join(w.Dir, "tmux.sock"), session: "top"}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-s", tm.session, "-x", "80", "-y", "24", "env"}
	args = append(args, w.Env()...)
	args = append(args, "TERM=xterm-256color", "LANG=C.UTF-8", "sh", "-c",
		fmt.Sprintf("'%s' --db '%s' top; echo __top_rc=$?; sleep 120", testproc.Binary(), w.DB))
	if out, err := tm.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm.tmux("kill-server") })
	see := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := tm.screen(t)
			if ok(s) {
				for _, line := range strings.Split(s, "\n") {
					if runewidth.StringWidth(line) > 80 {
						t.Errorf("a line of %d columns at 80: %q", runewidth.StringWidth(line), line)
					}
				}
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s on the screen within 20 s:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	row := func(state string) func(string) bool {
		return func(s string) bool {
			for _, line := range strings.Split(s, "\n") {
				if strings.Contains(line, "spring.csv") && strings.Contains(line, state) {
					return true
				}
			}
			return false
		}
	}
	see("the campaign running", row("running"))
	if out, err := tm.tmux("send-keys", "-t", tm.session, "p"); err != nil {
		t.Fatalf("tmux send-keys p: %v\n%s", err, out)
	}
	see("the campaign paused", row("paused"))
	if r := run.Wait(t); r.Code != 4 {
		t.Errorf("the run ended with %d after the pause, want 4 (paused):\n%s", r.Code, r)
	}
	if st := w.campaigns()[0].State; st != "paused" {
		t.Errorf("campaign is %s in the database after p, want paused", st)
	}
	if out, err := tm.tmux("send-keys", "-t", tm.session, "q"); err != nil {
		t.Fatalf("tmux send-keys q: %v\n%s", err, out)
	}
	s := see("top's exit status", func(s string) bool { return strings.Contains(s, "__top_rc=") })
	if !strings.Contains(s, "__top_rc=0") {
		t.Errorf("top did not exit 0 on q:\n%s", s)
	}
}
