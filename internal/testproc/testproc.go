// Package testproc is the process harness of wasend's end-to-end suite
// (internal/e2e) and reliability suite (internal/torture): it builds the
// wasend binary once, gives each test a directory and database, runs,
// signals and kills wasend processes, serves the sandbox as a process, and
// reads back its record and the database.
//
// Only tests import it: it calls t.Fatal, and nothing in wasend's commands
// depends on it.
package testproc

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binary is the wasend executable Main builds.
var binary string

// Binary is the path of the wasend executable Main built.
func Binary() string { return binary }

// Main builds wasend into a temporary directory, runs the tests and removes
// the directory again; a test package's TestMain returns os.Exit(Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasend-testproc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testproc:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "wasend")
	build := exec.Command("go", "build", "-o", binary, "github.com/wasend/wasend")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "testproc: build wasend: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// Options shape a World; zero values get the defaults named.
type Options struct {
	APIBase  string        // WASEND_API_BASE of every process; settable later on World
	TokenEnv string        // the variable accounts read their token from (default WASEND_TEST_TOKEN)
	Timeout  time.Duration // bounds every wasend process (default 30 s)
	Poll     time.Duration // how often WaitFor checks (default 20 ms)
}

// World is one test's surroundings: a temporary directory, a database file
// in it, and the Cloud API base every wasend process sends to.
type World struct {
	T        *testing.T
	Dir      string
	DB       string
	APIBase  string
	TokenEnv string
	Timeout  time.Duration
	Poll     time.Duration
	// Extra are more NAME=value variables for every process started after
	// they are set (a webhook receiver's app secret).
	Extra []string
	// Reader, when set, is how Query and CheckCounts read DB instead of
	// opening it as a SQLite file: a Postgres database's read handle
	// (pgstore's Reader), DB then its URL.
	Reader *sql.DB
}

// New returns a World in a fresh temporary directory of t.
func New(t *testing.T, opts Options) *World {
	t.Helper()
	w := &World{T: t, Dir: t.TempDir(), APIBase: opts.APIBase, TokenEnv: opts.TokenEnv, Timeout: opts.Timeout, Poll: opts.Poll}
	w.DB = filepath.Join(w.Dir, "wasend.db")
	if w.TokenEnv == "" {
		w.TokenEnv = "WASEND_TEST_TOKEN"
	}
	if w.Timeout == 0 {
		w.Timeout = 30 * time.Second
	}
	if w.Poll == 0 {
		w.Poll = 20 * time.Millisecond
	}
	return w
}

// BaseEnv is the caller's environment minus anything that could point
// wasend elsewhere: every WASEND_ setting and XDG_DATA_HOME.
func BaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WASEND_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

// Env is the environment of a wasend process of w: BaseEnv plus the API
// base, UTC quota days, a token in TokenEnv and XDG_DATA_HOME in Dir.
func (w *World) Env() []string {
	env := append(BaseEnv(),
		"WASEND_API_BASE="+w.APIBase,
		"WASEND_TZ=UTC",
		w.TokenEnv+"=test-token",
		"XDG_DATA_HOME="+w.Dir,
	)
	return append(env, w.Extra...)
}

// Proc is a running wasend process.
type Proc struct {
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	stdout, stderr bytes.Buffer
	args           []string
	done           chan struct{}
	err            error
}

// Result is how a wasend process ended.
type Result struct {
	Code           int            // exit code; -1 when killed by a signal
	Signal         syscall.Signal // the signal that killed it, if any
	Stdout, Stderr string
}

func (r Result) String() string {
	how := fmt.Sprintf("exit %d", r.Code)
	if r.Signal != 0 {
		how = "killed by " + r.Signal.String()
	}
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", how, tail(r.Stdout), tail(r.Stderr))
}

// tail keeps the end of long output.
func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}

// Start runs wasend --db DB args… in the background. A process still
// running when the test ends is killed, so a test that failed half-way
// leaves none behind (nor a busy mount point).
func (w *World) Start(args ...string) *Proc {
	w.T.Helper()
	return w.StartEnv(w.Env(), append([]string{"--db", w.DB}, args...)...)
}

// StartEnv runs wasend args… (no --db added) in the background with
// exactly env, as cron or a bare shell would.
func (w *World) StartEnv(env []string, args ...string) *Proc {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), w.Timeout)
	p := &Proc{ctx: ctx, cancel: cancel, args: args, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, binary, args...)
	p.cmd.Dir = w.Dir
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		w.T.Fatalf("start wasend %s: %v", strings.Join(args, " "), err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	w.T.Cleanup(func() {
		if !p.Exited() {
			p.cmd.Process.Kill()
			<-p.done
		}
		p.cancel()
	})
	return p
}

// Pid is the process's id, as wasend records it in its runner's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the process to end. It fails the test when the process
// outlived its time limit or could not be waited for.
func (p *Proc) Wait(t *testing.T) Result {
	t.Helper()
	<-p.done
	defer p.cancel()
	r := Result{Stdout: p.stdout.String(), Stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		r.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = ws.Signal()
		}
	default:
		t.Fatalf("wasend %s: %v", strings.Join(p.args, " "), p.err)
	}
	if p.ctx.Err() != nil {
		t.Fatalf("wasend %s: still running after its time limit\n%s", strings.Join(p.args, " "), r)
	}
	return r
}

// Signal sends sig to the process.
func (p *Proc) Signal(t *testing.T, sig os.Signal) {
	t.Helper()
	// A process can end at any moment, between a test's look and its
	// signal: one that has ended is not signalled and not a failure (the
	// caller reads what became of it from Exited or Wait).
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// Run runs wasend --db DB args… to its end.
func (w *World) Run(args ...string) Result {
	w.T.Helper()
	return w.Start(args...).Wait(w.T)
}

// OK runs wasend and fails the test unless it exits 0.
func (w *World) OK(args ...string) Result {
	w.T.Helper()
	r := w.Run(args...)
	if r.Code != 0 {
		w.T.Fatalf("wasend %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// WriteCSV writes a recipient file of n distinct numbers starting at first
// (digits after "+"), with a name column, and returns its path.
func (w *World) WriteCSV(name string, first int64, n int) string {
	w.T.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range int64(n) {
		fmt.Fprintf(&b, "+%d,Person %d\n", first+i, i)
	}
	path := filepath.Join(w.Dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		w.T.Fatal(err)
	}
	return path
}

// WaitFor polls cond every Poll until it holds, failing the test after d.
func (w *World) WaitFor(d time.Duration, what string, cond func() bool) {
	w.T.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			w.T.Fatalf("gave up after %v waiting for %s", d, what)
		}
		time.Sleep(w.Poll)
	}
}
