//go:build torture

package torture

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

var (
	fullFlag = flag.Bool("torture.full", os.Getenv("WASEND_TORTURE_FULL") != "",
		"run every scenario at full size (default: the short CI size; also $WASEND_TORTURE_FULL)")
	seedFlag = flag.Uint64("torture.seed", 0, "seed of kill moments and sandbox faults (0: from the clock)")
)

// binary is the wasend executable built once by TestMain, without -race:
// the suite measures wasend, not the race detector.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasend-torture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "torture:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "wasend")
	build := exec.Command("go", "build", "-o", binary, "github.com/wasend/wasend")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "torture: build wasend: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// size picks the short or the full figure of a scenario.
func size[T any](short, full T) T {
	if *fullFlag {
		return full
	}
	return short
}

// testSeed returns the seed of a scenario, logged so a failure can be
// replayed with -torture.seed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano() % (1 << 40))
	}
	t.Logf("seed %d (replay with -args -torture.seed=%d%s)", seed, seed, size("", " -torture.full"))
	return seed
}

// tokenEnv names the variable the test accounts read their token from.
const tokenEnv = "WASEND_TORTURE_TOKEN"

// world is one scenario's surroundings: a directory, a database file, and
// a sandbox process that every wasend process sends to.
type world struct {
	t       *testing.T
	dir     string
	db      string
	api     *sandboxProc
	timeout time.Duration // bounds every wasend process
}

func newWorld(t *testing.T, sandboxArgs ...string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, db: filepath.Join(dir, "wasend.db"), timeout: size(90*time.Second, 10*time.Minute)}
	w.api = startSandbox(t, dir, sandboxArgs...)
	return w
}

// sandboxProc is a running `wasend sandbox serve --record FILE`.
type sandboxProc struct {
	cmd    *exec.Cmd
	url    string
	record string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// startSandbox serves the sandbox on a free loopback port with args as
// its fault flags, and stops it when the test ends.
func startSandbox(t *testing.T, dir string, args ...string) *sandboxProc {
	t.Helper()
	s := &sandboxProc{record: filepath.Join(dir, "sandbox.jsonl"), done: make(chan struct{})}
	all := append([]string{"sandbox", "serve", "--addr", "127.0.0.1:0", "--record", s.record}, args...)
	s.cmd = exec.Command(binary, all...)
	s.cmd.Env = baseEnv()
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Logf("sandbox: wasend %s", strings.Join(all, " "))
	ready := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "sandbox listening on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				ready <- url
			}
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
		}
		io.Copy(io.Discard, pipe)
	}()
	select {
	case s.url = <-ready:
	case <-s.done:
		s.cmd.Wait()
		t.Fatalf("sandbox ended before listening:\n%s", s.stderr.String())
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		t.Fatal("sandbox did not start listening within 10s")
	}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGINT)
		ended := make(chan error, 1)
		go func() { <-s.done; ended <- s.cmd.Wait() }()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("sandbox: %v\n%s", err, s.stderr.String())
			}
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			t.Errorf("sandbox did not stop within 15s of SIGINT")
		}
	})
	return s
}

// record is one line of the sandbox's --record file.
type record struct {
	At            time.Time `json:"at"`
	PhoneNumberID string    `json:"phone_number_id"`
	To            string    `json:"to"`
	CallbackData  string    `json:"callback_data"`
	HTTPStatus    int       `json:"http_status"`
	Code          int       `json:"code"`
	Outcome       string    `json:"outcome"`
	WAMID         string    `json:"wamid"`
}

// records reads the sandbox's record file. A line still being written is
// left for the next read.
func (s *sandboxProc) records(t *testing.T) []record {
	t.Helper()
	data, err := os.ReadFile(s.record)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var out []record
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s line %d: %v", s.record, i+1, err)
		}
		out = append(out, r)
	}
	return out
}

// acceptedOutcome reports whether the server took the message: a slow or
// dropped answer still delivered it.
func acceptedOutcome(o string) bool {
	return o == "accepted" || o == "slow" || o == "dropped"
}

// acceptedBy counts accepted messages per phone number id among recs.
func acceptedBy(recs []record) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		if acceptedOutcome(r.Outcome) {
			n[r.PhoneNumberID]++
		}
	}
	return n
}

// baseEnv is the caller's environment minus anything that could point
// wasend elsewhere.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WASEND_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	return env
}

func (w *world) env() []string {
	return append(baseEnv(),
		"WASEND_API_BASE="+w.api.url,
		"WASEND_TZ=UTC",
		tokenEnv+"=torture-token",
		"XDG_DATA_HOME="+w.dir,
	)
}

// proc is a running wasend process.
type proc struct {
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	stdout, stderr bytes.Buffer
	args           []string
	done           chan struct{}
	err            error
}

// result is how a wasend process ended.
type result struct {
	code           int            // exit code; -1 when killed by a signal
	signal         syscall.Signal // the signal that killed it, if any
	stdout, stderr string
}

func (r result) String() string {
	how := fmt.Sprintf("exit %d", r.code)
	if r.signal != 0 {
		how = "killed by " + r.signal.String()
	}
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", how, tail(r.stdout), tail(r.stderr))
}

// tail keeps the end of long output.
func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}

// start runs wasend --db DB args… in the background.
func (w *world) start(args ...string) *proc {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	p := &proc{ctx: ctx, cancel: cancel, args: args, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, binary, append([]string{"--db", w.db}, args...)...)
	p.cmd.Dir = w.dir
	p.cmd.Env = w.env()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		w.t.Fatalf("start wasend %s: %v", strings.Join(args, " "), err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	// A test that failed half-way leaves no process behind (nor a busy
	// mount point).
	w.t.Cleanup(func() {
		if !p.exited() {
			p.cmd.Process.Kill()
			<-p.done
		}
		p.cancel()
	})
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end.
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	<-p.done
	defer p.cancel()
	r := result{stdout: p.stdout.String(), stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	default:
		t.Fatalf("wasend %s: %v", strings.Join(p.args, " "), p.err)
	}
	if p.ctx.Err() != nil {
		t.Fatalf("wasend %s: still running after its time limit\n%s", strings.Join(p.args, " "), r)
	}
	return r
}

// signal sends sig to the process.
func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// run runs wasend --db DB args… to its end.
func (w *world) run(args ...string) result {
	w.t.Helper()
	return w.start(args...).wait(w.t)
}

// ok runs wasend and fails the test unless it exits 0.
func (w *world) ok(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("wasend %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// writeCSV writes a recipient file of n distinct German mobile numbers
// starting at first (digits after "+"), with a name column.
func (w *world) writeCSV(name string, first int64, n int) string {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range int64(n) {
		fmt.Fprintf(&b, "+%d,Person %d\n", first+i, i)
	}
	path := filepath.Join(w.dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// account is a sending number.
type account struct {
	name, phoneNumberID string
}

// threeAccounts are the sending numbers of most scenarios, one per tier.
var threeAccounts = []account{
	{"fresh", "100000000000001"},
	{"warming", "100000000000002"},
	{"main", "100000000000003"},
}

// setup sets every tier to rate/burst/cap and adds the accounts, one per
// tier in turn.
func (w *world) setup(rate float64, burst, dailyCap int, accts []account) {
	w.t.Helper()
	tiers := []string{"new", "warm", "active"}
	for _, tier := range tiers {
		w.ok("tier", "set", tier, "--rate", fmt.Sprint(rate), "--burst", fmt.Sprint(burst), "--daily-cap", fmt.Sprint(dailyCap))
	}
	for i, a := range accts {
		w.ok("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", tiers[i%len(tiers)], "--token-env", tokenEnv)
	}
}

// fastFailure keeps the failure model's waits short.
var fastFailure = []string{"--cooldown", "100ms", "--backoff-base", "20ms", "--backoff-max", "200ms"}

// runArgs is `campaign run CSV` with the demo template and extra flags.
func runArgs(csv string, extra ...string) []string {
	args := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name", "-q"}
	args = append(args, fastFailure...)
	return append(args, extra...)
}

// row is one message as wasend's database holds it.
type row struct {
	id, campaignID    int64
	phone, state      string
	wamid             string
	phoneNumberID     string // of the account that last claimed it
	errorCode         int
	errorMessage      string
	attempts, retries int
}

// query runs q on the database opened read-only, calling scan for every
// row, with its own connection so the test never holds a lock that the
// processes under test wait for.
func (w *world) query(q string, scan func(*sql.Rows) error, args ...any) {
	w.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+w.db+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		w.t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(q, args...)
	if err != nil {
		w.t.Fatalf("query %q: %v", q, err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			w.t.Fatalf("query %q: %v", q, err)
		}
	}
	if err := rs.Err(); err != nil {
		w.t.Fatalf("query %q: %v", q, err)
	}
}

// rows returns every message of every campaign.
func (w *world) rows() []row {
	w.t.Helper()
	var out []row
	w.query(`SELECT m.id, m.campaign_id, m.phone, m.state, coalesce(m.wamid, ''), coalesce(a.phone_number_id, ''),
			coalesce(m.error_code, 0), coalesce(m.error_message, ''), m.attempts, m.retries
		FROM messages m LEFT JOIN accounts a ON a.id = m.account_id ORDER BY m.id`,
		func(rs *sql.Rows) error {
			var r row
			err := rs.Scan(&r.id, &r.campaignID, &r.phone, &r.state, &r.wamid, &r.phoneNumberID,
				&r.errorCode, &r.errorMessage, &r.attempts, &r.retries)
			out = append(out, r)
			return err
		})
	return out
}

// states counts rows by state.
func states(rows []row) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[r.state]++
	}
	return n
}

// waitFor polls cond until it holds, failing the test after d.
func (w *world) waitFor(d time.Duration, what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("gave up after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkOutput fails for what must never reach a user: a locked database,
// a panic.
func checkOutput(t *testing.T, what string, r result) {
	t.Helper()
	for _, bad := range []string{"database is locked", "panic:", "goroutine ", "SQLITE_BUSY"} {
		if strings.Contains(r.stderr, bad) || strings.Contains(r.stdout, bad) {
			t.Errorf("%s: output contains %q\n%s", what, bad, r)
		}
	}
}

// claims returns every token wasend took for a request, as a record of
// the attempts table: its callback data, its account's phone number id and
// claimed_at. Claims the engine put back unsent (class not-sent: their
// account had just been throttled or dropped) made no request.
func (w *world) claims() []record {
	w.t.Helper()
	var out []record
	w.query(`SELECT 'wasend:c' || m.campaign_id || ':m' || m.id, a.phone_number_id, t.claimed_at
		FROM attempts t JOIN accounts a ON a.id = t.account_id JOIN messages m ON m.id = t.message_id
		WHERE coalesce(t.class, '') <> 'not-sent' ORDER BY t.id`,
		func(rs *sql.Rows) error {
			var r record
			var ns int64
			err := rs.Scan(&r.CallbackData, &r.PhoneNumberID, &ns)
			r.At = time.Unix(0, ns)
			out = append(out, r)
			return err
		})
	return out
}
