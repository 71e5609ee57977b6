//go:build walkthrough

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/testproc"
)

// The README walk-through (issue 26): every command in README.md's code
// blocks, and every `wasend …` it quotes in its prose, typed into a shell
// in tmux at 80 and at 120 columns, as a new user would paste them — the
// binary on PATH as wasend, `go run .` from the repository root, a fresh
// home directory (so a fresh default database) for each width. Each must
// exit as documented, print no panic, and its terminal output must fit:
// a table row or the progress line the terminal had to wrap fails the
// test; prose (a summary, a hint, a warning) may wrap.
//
// Run it with: go test -tags walkthrough -count=1 -run TestREADMEWalkthrough ./internal/e2e/
// (.ci/run does; it needs tmux).
//
// The steps (walkSteps, readme_steps_test.go) are the script, in the order
// a reader meets them; the README is the list. A command in the README
// with no step, or a step whose command left the README, fails this test
// and the ordinary run's TestREADMEStepsMatch: the front door cannot drift
// from the product without someone deciding what the new command should do.

func TestREADMEWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the README walk-through needs tmux (.ci/run installs it)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSteps(filepath.Join(root, "README.md")); err != nil {
		t.Fatal(err)
	}

	// The binary TestMain built, on PATH as wasend.
	bin := filepath.Dir(testproc.Binary())
	api := testproc.StartSandbox(t, t.TempDir(), "--fail-number", failing+"=131026")
	// go run needs the build cache it already has, not one in the fresh home.
	goEnv := map[string]string{}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv[name] = strings.TrimSpace(string(out))
	}

	// One receiver at a time may listen on the README's 127.0.0.1:8080.
	var port8080 sync.Mutex
	for _, width := range []int{80, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			promo, err := os.ReadFile(filepath.Join(root, "testdata", "recipients.csv"))
			if err != nil {
				t.Fatal(err)
			}
			// The first five rows: within an active number's burst, so
			// the tour sends at once.
			rows := strings.SplitAfterN(string(promo), "\n", 7)
			if err := os.WriteFile(filepath.Join(dir, "promo.csv"), []byte(strings.Join(rows[:6], "")), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{
				"PATH": bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME": filepath.Join(dir, "home"),
				"WASEND_API_BASE": api.URL, "WASEND_APP_SECRET": "walkthrough-secret", "WASEND_VERIFY_TOKEN": "walkthrough-verify",
				"WASEND_TZ": "UTC", "TERM": "xterm-256color", "LANG": "C.UTF-8",
			}
			for k, v := range goEnv {
				env[k] = v
			}
			// Nor a telemetry process outliving the test in the fresh home.
			env["GOTELEMETRY"] = "off"
			tm := startTmux(t, dir, width, env)
			for _, s := range walkSteps {
				if s.skip != "" {
					t.Logf("skip %q: %s", s.cmd, s.skip)
					continue
				}
				cwd := dir
				if s.repo {
					cwd = root
				}
				out, code := func() (string, int) {
					if s.interrupt != "" {
						port8080.Lock()
						defer port8080.Unlock()
					}
					return tm.run(t, cwd, s)
				}()
				t.Logf("$ %s  (exit %d)\n%s", s.cmd, code, out)
				if code != s.exit {
					t.Errorf("%q at %d columns: exit %d, want %d\n%s", s.cmd, width, code, s.exit, out)
				}
				if strings.Contains(out, "panic:") || strings.Contains(out, "goroutine ") {
					t.Errorf("%q at %d columns panicked:\n%s", s.cmd, width, out)
				}
				for _, w := range s.want {
					if !strings.Contains(out, w) {
						t.Errorf("%q at %d columns: no %q on the screen:\n%s", s.cmd, width, w, out)
					}
				}
				for _, line := range strings.Split(out, "\n") {
					if runewidth.StringWidth(line) > width && !mayWrap(line) {
						t.Errorf("%q at %d columns: a line of %d columns wraps:\n%s", s.cmd, width, runewidth.StringWidth(line), line)
					}
				}
			}
		})
	}
}

// mayWrap says whether a line is prose a terminal may wrap (a summary, a
// hint, a warning: scripts read some of them whole, so wasend does not
// break them), not a table row (cells aligned by runs of spaces) nor the
// progress line (its bar, or its " · " between figures): those must fit.
func mayWrap(line string) bool {
	body := strings.TrimLeft(line, " ")
	return !strings.Contains(body, "  ") && !strings.Contains(body, "[=") && !strings.Contains(body, " · ")
}

// tmuxShell is a bash in a tmux session of its own server (its own socket),
// whose prompt prints the last command's exit status after each command.
type tmuxShell struct {
	sock, session string
}

const rcMark = "__walk_rc="

func startTmux(t *testing.T, dir string, width int, env map[string]string) *tmuxShell {
	t.Helper()
	tm := &tmuxShell{sock: filepath.Join(dir, "tmux.sock"), session: "walk"}
	// A long history (the sandbox demo prints more than a screen), set
	// before the window is made.
	args := []string{"-f", "/dev/null", "start-server", ";", "set-option", "-g", "history-limit", "20000", ";",
		"new-session", "-d", "-s", tm.session, "-x", fmt.Sprint(width), "-y", "50"}
	// The variables go to env, not tmux's -e: the server's own PATH wins
	// over -e's. bash reads no start-up file: the user's settings play no
	// part.
	args = append(args, "env")
	for k, v := range env {
		args = append(args, k+"="+v)
	}
	// No history file: bash would write it as the server stops, into a
	// home being removed.
	args = append(args, "PS1=$ ", "PROMPT_COMMAND=echo "+rcMark+"$?", "HISTFILE=", "bash", "--norc", "--noprofile")
	if out, err := tm.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm.tmux("kill-server") })
	tm.waitMarks(t, 1, 10*time.Second)
	return tm
}

func (tm *tmuxShell) tmux(args ...string) (string, error) {
	c := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...)
	// Nothing of the caller's wasend settings, nor its own tmux.
	for _, kv := range testproc.BaseEnv() {
		if !strings.HasPrefix(kv, "TMUX") {
			c.Env = append(c.Env, kv)
		}
	}
	out, err := c.CombinedOutput()
	return string(out), err
}

// screen is everything the pane shows and has scrolled off, wrapped
// lines joined back (so a line longer than the pane is one that wrapped).
func (tm *tmuxShell) screen(t *testing.T) string {
	out, err := tm.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", tm.session)
	if err != nil {
		t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// waitMarks waits until the screen holds n exit-status marks.
func (tm *tmuxShell) waitMarks(t *testing.T, n int, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tm.screen(t)
		if strings.Count(s, rcMark) >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exit status within %v; the screen:\n%s", d, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run types s's command into the shell in cwd, as written, and returns
// what it printed and its exit status.
func (tm *tmuxShell) run(t *testing.T, cwd string, s step) (string, int) {
	t.Helper()
	marks := strings.Count(tm.screen(t), rcMark)
	tm.send(t, "cd '"+cwd+"'")
	marks++
	tm.waitMarks(t, marks, 10*time.Second)
	tm.send(t, s.cmd)
	timeout := s.timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if s.interrupt != "" {
		deadline := time.Now().Add(timeout)
		for !strings.Contains(afterMark(tm.screen(t), marks), s.interrupt) {
			if time.Now().After(deadline) {
				t.Fatalf("%q: no %q within %v:\n%s", s.cmd, s.interrupt, timeout, afterMark(tm.screen(t), marks))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if out, err := tm.tmux("send-keys", "-t", tm.session, "C-c"); err != nil {
			t.Fatalf("tmux send-keys C-c: %v\n%s", err, out)
		}
	}
	out := afterMark(tm.waitMarks(t, marks+1, timeout), marks)
	i := strings.Index(out, rcMark)
	var code int
	fmt.Sscanf(out[i+len(rcMark):], "%d", &code)
	// The output is what follows the line of the typed command.
	out = out[:i]
	if j := strings.Index(out, "\n"); j >= 0 {
		out = out[j+1:]
	}
	return out, code
}

// afterMark is the screen after the line of its n-th exit-status mark.
func afterMark(screen string, n int) string {
	for range n {
		i := strings.Index(screen, rcMark)
		if i < 0 {
			return ""
		}
		screen = screen[i+len(rcMark):]
	}
	if j := strings.Index(screen, "\n"); j >= 0 {
		return screen[j+1:]
	}
	return ""
}

// send types line and Enter; -l sends it literally (a ";" or a key name
// in it is text).
func (tm *tmuxShell) send(t *testing.T, line string) {
	t.Helper()
	if out, err := tm.tmux("send-keys", "-t", tm.session, "-l", line); err != nil {
		t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	if out, err := tm.tmux("send-keys", "-t", tm.session, "Enter"); err != nil {
		t.Fatalf("tmux send-keys Enter: %v\n%s", err, out)
	}
}
