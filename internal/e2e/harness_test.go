package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/sandbox"
)

// binary is the wasend executable built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasend-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "wasend")
	build := exec.Command("go", "build", "-o", binary, "github.com/wasend/wasend")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build wasend: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// runTimeout bounds every wasend process; a hang fails the test instead of
// the whole package.
const runTimeout = 30 * time.Second

// tokenEnv names the variable the test accounts read their token from.
const tokenEnv = "WASEND_E2E_TOKEN"

// world is one test's surroundings: a temporary directory, a database file
// in it, and a sandbox Cloud API that every wasend process sends to.
type world struct {
	t   *testing.T
	dir string
	db  string
	api *sandbox.Server
	url string
	// extraEnv is added last to every process's environment (a later
	// setting wins): a test points WASEND_API_BASE elsewhere with it.
	extraEnv []string
}

func newWorld(t *testing.T, opts sandbox.Options) *world {
	t.Helper()
	api := sandbox.New(opts)
	ts := httptest.NewServer(api)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	return &world{t: t, dir: dir, db: filepath.Join(dir, "wasend.db"), api: api, url: ts.URL}
}

// env is the environment of a wasend process: the caller's, minus any
// WASEND_ setting that could point it elsewhere.
func (w *world) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WASEND_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	return append(append(env,
		"WASEND_API_BASE="+w.url,
		"WASEND_TZ=UTC",
		tokenEnv+"=e2e-token",
		"XDG_DATA_HOME="+w.dir,
	), w.extraEnv...)
}

// proc is a running wasend process.
type proc struct {
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	stdout, stderr bytes.Buffer
	args           []string
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
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", how, r.stdout, r.stderr)
}

// start runs wasend --db DB args… in the background.
func (w *world) start(args ...string) *proc {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	p := &proc{ctx: ctx, cancel: cancel, args: args}
	p.cmd = exec.CommandContext(ctx, binary, append([]string{"--db", w.db}, args...)...)
	p.cmd.Dir = w.dir
	p.cmd.Env = w.env()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		w.t.Fatalf("start wasend %s: %v", strings.Join(args, " "), err)
	}
	return p
}

// wait waits for the process to end.
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	defer p.cancel()
	err := p.cmd.Wait()
	r := result{stdout: p.stdout.String(), stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	default:
		t.Fatalf("wasend %s: %v", strings.Join(p.args, " "), err)
	}
	if p.ctx.Err() != nil {
		t.Fatalf("wasend %s: still running after %v\n%s", strings.Join(p.args, " "), runTimeout, r)
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

// account is a sending number for addAccounts.
type account struct {
	name, phoneNumberID, tier string
}

// addAccounts adds the accounts with their token in tokenEnv.
func (w *world) addAccounts(accts ...account) {
	w.t.Helper()
	for _, a := range accts {
		w.ok("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", a.tier, "--token-env", tokenEnv)
	}
}

// campaignJSON is the part of `campaign list --json` the tests read.
type campaignJSON struct {
	ID      int64  `json:"id"`
	State   string `json:"state"`
	Total   int    `json:"total"`
	Sent    int    `json:"sent"`
	Pending int    `json:"pending"`
	Sending int    `json:"sending"`
	Failed  int    `json:"failed"`
	Unknown int    `json:"unknown"`
	Skipped int    `json:"skipped"`
}

// campaigns returns `wasend campaign list --json`.
func (w *world) campaigns() []campaignJSON {
	w.t.Helper()
	r := w.ok("campaign", "list", "--json")
	var out []campaignJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		w.t.Fatalf("campaign list --json: %v\n%s", err, r.stdout)
	}
	return out
}

// row is one message as the database holds it.
type row struct {
	campaignID    int64
	id            int64
	phone, state  string
	wamid         string
	phoneNumberID string // of the account that last claimed it
}

// query runs q on the database opened read-only, calling scan for every
// row. It opens and closes its own connection so the test never holds a
// lock that the processes under test wait for.
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
	w.query(`SELECT m.campaign_id, m.id, m.phone, m.state, coalesce(m.wamid, ''), coalesce(a.phone_number_id, '')
		FROM messages m LEFT JOIN accounts a ON a.id = m.account_id ORDER BY m.id`,
		func(rs *sql.Rows) error {
			var r row
			out = append(out, r)
			p := &out[len(out)-1]
			return rs.Scan(&p.campaignID, &p.id, &p.phone, &p.state, &p.wamid, &p.phoneNumberID)
		})
	return out
}

// dispatchID is the callback data wasend sends with a row's requests.
func dispatchID(r row) string { return fmt.Sprintf("wasend:c%d:m%d", r.campaignID, r.id) }

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
		time.Sleep(20 * time.Millisecond)
	}
}

// acceptedOutcome reports whether the server took the message: a slow or
// dropped answer still delivered it.
func acceptedOutcome(o string) bool {
	return o == sandbox.OutcomeAccepted || o == sandbox.OutcomeSlow || o == sandbox.OutcomeDropped
}

// accepted returns, per recipient, the records the server accepted.
func accepted(recs []sandbox.Record) map[string][]sandbox.Record {
	out := map[string][]sandbox.Record{}
	for _, r := range recs {
		if acceptedOutcome(r.Outcome) {
			out[r.To] = append(out[r.To], r)
		}
	}
	return out
}

// checkNoDuplicates fails for every recipient the server accepted twice.
func checkNoDuplicates(t *testing.T, recs []sandbox.Record) {
	t.Helper()
	for to, rs := range accepted(recs) {
		if len(rs) > 1 {
			t.Errorf("recipient %s accepted %d times by the server, at %v and %v", to, len(rs), rs[0].At, rs[1].At)
		}
	}
}

// checkAgainstServer holds the database's story up against the server's
// once every process has ended: a sent row was accepted with the same wamid
// from the same number; a row the server never accepted is failed or
// unknown (or pending, when allowPending: a run stopped at the caps); a row
// it accepted that wasend does not know as sent is unknown. No row is
// left sending.
func checkAgainstServer(t *testing.T, rows []row, recs []sandbox.Record, allowPending bool) {
	t.Helper()
	acc := accepted(recs)
	inDB := map[string]bool{}
	for _, r := range rows {
		inDB[r.phone] = true
		got := acc[r.phone]
		switch {
		case r.state == "sending" || r.state == "pending" && !allowPending:
			t.Errorf("%s: still %s after the last run", r.phone, r.state)
		case r.state == "sent" && len(got) == 0:
			t.Errorf("%s: sent in wasend (wamid %s) but never accepted by the server", r.phone, r.wamid)
		case r.state == "sent" && got[0].WAMID != r.wamid:
			t.Errorf("%s: wasend's wamid %s, the server's %s", r.phone, r.wamid, got[0].WAMID)
		case r.state == "sent" && got[0].PhoneNumberID != r.phoneNumberID:
			t.Errorf("%s: wasend says sent from %s, the server got it from %s", r.phone, r.phoneNumberID, got[0].PhoneNumberID)
		case r.state != "sent" && len(got) > 0 && r.state != "unknown":
			t.Errorf("%s: accepted by the server (%s) but %s in wasend; it must be unknown", r.phone, got[0].Outcome, r.state)
		}
	}
	for to := range acc {
		if !inDB[to] {
			t.Errorf("server accepted %s, which is in no campaign", to)
		}
	}
	if sent := states(rows)["sent"]; sent > len(acc) {
		t.Errorf("wasend counts %d sent, the server accepted only %d recipients", sent, len(acc))
	}
}

// checkRate fails when more than burst + rate·(t_j − t_i) + slack of the
// times fall in any window [t_i, t_j]. times must be sorted.
func checkRate(t *testing.T, what string, times []time.Time, rate float64, burst int, slack float64) {
	t.Helper()
	for i := range times {
		for j := i; j < len(times); j++ {
			n := float64(j - i + 1)
			allowed := float64(burst) + rate*times[j].Sub(times[i]).Seconds() + slack
			if n > allowed+1e-9 {
				t.Errorf("%s: %d requests in %v (from #%d at %s), at most %.2f allowed",
					what, j-i+1, times[j].Sub(times[i]), i, times[i].Format("15:04:05.000"), math.Floor(allowed))
				return
			}
		}
	}
}

// sortedTimes returns ts sorted.
func sortedTimes(ts []time.Time) []time.Time {
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// claim is one token taken: a row of the attempts table.
type claim struct {
	callbackData  string // as the request carries it
	phoneNumberID string
	at            time.Time
}

// claims returns every attempt that made a request (or may have), in the
// order it was claimed. Claims the engine put back unsent — their account
// was dropped or the campaign paused while they waited — are left out.
func (w *world) claims() []claim {
	w.t.Helper()
	var out []claim
	w.query(`SELECT 'wasend:c' || m.campaign_id || ':m' || m.id, a.phone_number_id, t.claimed_at
		FROM attempts t JOIN messages m ON m.id = t.message_id JOIN accounts a ON a.id = t.account_id
		WHERE coalesce(t.class, '') <> 'not-sent' ORDER BY t.id`,
		func(rs *sql.Rows) error {
			var c claim
			var ns int64
			err := rs.Scan(&c.callbackData, &c.phoneNumberID, &ns)
			c.at = time.Unix(0, ns)
			out = append(out, c)
			return err
		})
	return out
}

// matchClaims pairs every request the server received with the claim that
// spent a token on it: the k-th request for a message with its k-th
// attempt. It fails for a request that no token paid for, or that came
// from another number than the one claimed, and returns the claim of each
// request and the claims that never reached the server.
func matchClaims(t *testing.T, recs []sandbox.Record, claims []claim) (of []claim, unsent []claim) {
	t.Helper()
	queue := map[string][]claim{}
	for _, c := range claims {
		queue[c.callbackData] = append(queue[c.callbackData], c)
	}
	of = make([]claim, len(recs))
	for i, r := range recs {
		q := queue[r.CallbackData]
		if len(q) == 0 {
			t.Errorf("request %d to %s (%s) at %s: no token was taken for it", i, r.To, r.CallbackData, r.At.Format("15:04:05.000"))
			continue
		}
		of[i], queue[r.CallbackData] = q[0], q[1:]
		if of[i].phoneNumberID != r.PhoneNumberID {
			t.Errorf("request %d to %s: sent from %s, claimed on %s", i, r.To, r.PhoneNumberID, of[i].phoneNumberID)
		}
		if r.At.Before(of[i].at) {
			t.Errorf("request %d to %s: reached the server at %s, before its claim at %s", i, r.To,
				r.At.Format("15:04:05.000000"), of[i].at.Format("15:04:05.000000"))
		}
	}
	for _, q := range queue {
		unsent = append(unsent, q...)
	}
	return of, unsent
}
