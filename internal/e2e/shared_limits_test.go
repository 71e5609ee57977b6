package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// sharedAccounts are the two numbers every host of these tests sends from.
var sharedAccounts = []account{{"left", "100000000000031", "active"}, {"right", "100000000000032", "active"}}

// newHosts makes n hosts — each its own directory and database — with the
// same two accounts and limits, sending to one sandbox and sharing their
// limits through the Redis at url (WASEND_LIMITS).
func newHosts(t *testing.T, n int, url string, rate float64, burst, dailyCap int) []*world {
	t.Helper()
	first := newWorld(t, sandbox.Options{PairInterval: -1})
	hosts := []*world{first}
	for range n - 1 {
		hosts = append(hosts, worldAt(t, first.api, first.APIBase))
	}
	for _, h := range hosts {
		h.Extra = append(h.Extra, "WASEND_LIMITS="+url)
		h.addAccounts(sharedAccounts...)
		for _, a := range sharedAccounts {
			h.OK("account", "set", a.name, "--rate", fmt.Sprint(rate), "--burst", fmt.Sprint(burst), "--daily-cap", fmt.Sprint(dailyCap))
		}
	}
	return hosts
}

// runShards starts `campaign run list --shard K/N` on every host.
func runShards(hosts []*world, list string, extra ...string) []*testproc.Proc {
	var procs []*testproc.Proc
	for k, h := range hosts {
		procs = append(procs, h.Start(shardRun(list, k+1, len(hosts), extra...)...))
	}
	return procs
}

// shardRun is the command line of shard k of n.
func shardRun(list string, k, n int, extra ...string) []string {
	return append([]string{"campaign", "run", list, "--template", "spring_sale", "--lang", "en_US", "--params", "name",
		"--shard", fmt.Sprintf("%d/%d", k, n)}, extra...)
}

// sharedClaim is a token a host took: for which recipient, on which
// number, when.
type sharedClaim struct {
	to, number string
	at         time.Time
}

// hostClaims are the claims of every host that made a request (those put
// back unsent made none), oldest first per host.
func hostClaims(hosts []*world) []sharedClaim {
	var out []sharedClaim
	for _, h := range hosts {
		h.Query(`SELECT m.phone, a.phone_number_id, t.claimed_at FROM attempts t JOIN accounts a ON a.id = t.account_id
			JOIN messages m ON m.id = t.message_id WHERE coalesce(t.class, '') <> 'not-sent' ORDER BY t.id`,
			func(rs *sql.Rows) error {
				var c sharedClaim
				var ns int64
				err := rs.Scan(&c.to, &c.number, &ns)
				c.at = time.Unix(0, ns)
				out = append(out, c)
				return err
			})
	}
	return out
}

// checkShared holds the hosts' story up against the server's record:
// nobody accepted twice, every request paid for by a claim on its number,
// and each account's requests at the server within its bucket, give or
// take one token plus what the spread of claim-to-server delays can bunch
// together. (The hosts' claim times are their own clocks read before
// asking Redis, whose clock decides: not the times to hold the bucket
// to.) It returns the accepted messages per number.
func checkShared(t *testing.T, hosts []*world, rate float64, burst int) map[string]int {
	t.Helper()
	recs := hosts[0].api.Records()
	checkNoDuplicates(t, recs)
	claims := hostClaims(hosts)
	byTo := map[string][]sharedClaim{}
	for _, c := range claims {
		byTo[c.to] = append(byTo[c.to], c)
	}
	accepted := map[string]int{}
	delays := map[string][2]time.Duration{}
	for i, r := range recs {
		q := byTo[r.To]
		if len(q) == 0 {
			t.Errorf("request %d to %s at %s: no host took a token for it", i, r.To, r.At.Format("15:04:05.000"))
			continue
		}
		c := q[0]
		byTo[r.To] = q[1:]
		if c.number != r.PhoneNumberID {
			t.Errorf("request %d to %s: sent from %s, claimed on %s", i, r.To, r.PhoneNumberID, c.number)
		}
		d := r.At.Sub(c.at)
		lh, ok := delays[r.PhoneNumberID]
		if !ok {
			lh = [2]time.Duration{math.MaxInt64, 0}
		}
		delays[r.PhoneNumberID] = [2]time.Duration{min(lh[0], d), max(lh[1], d)}
		if testproc.AcceptedOutcome(r.Outcome) {
			accepted[r.PhoneNumberID]++
		}
	}
	for to, q := range byTo {
		if len(q) > 0 {
			t.Errorf("%d token(s) taken for %s that never reached the server", len(q), to)
		}
	}
	for _, a := range sharedAccounts {
		var arrived []time.Time
		for _, r := range recs {
			if r.PhoneNumberID == a.phoneNumberID {
				arrived = append(arrived, r.At)
			}
		}
		jitter := delays[a.phoneNumberID][1] - delays[a.phoneNumberID][0]
		checkRate(t, "server, account "+a.name, sortedTimes(arrived), rate, burst, 1+rate*jitter.Seconds())
	}
	return accepted
}

// TestThreeHostsShareLimitsThroughRedis: three hosts, each its own
// database, the same two numbers, one Redis, a third of one list each.
// The server's record shows every limit held across the hosts: nobody
// twice, no bucket overdrawn by more than a token, each daily cap taken
// exactly; after a forced quota reset the same commands send the rest,
// and every recipient got one message.
func TestThreeHostsShareLimitsThroughRedis(t *testing.T) {
	const (
		rate     = 10.0
		burst    = 3
		dailyCap = 20
		rows     = 60 // the caps allow 40 a day
	)
	r := redistest.Start(t)
	hosts := newHosts(t, 3, r.URL(), rate, burst, dailyCap)
	list := hosts[0].WriteCSV("list.csv", 4915112380000, rows)

	// Redis holds no state yet: nothing is sent before a forced reset.
	hosts[0].OK("quota", "reset", "--force")

	capped := 0
	for i, p := range runShards(hosts, list, "--stop-when-capped") {
		res := p.Wait(t)
		switch res.Code {
		case 0:
		case 3:
			capped++
		default:
			t.Errorf("host %d: want exit 0 or 3 (capped)\n%s", i+1, res)
		}
	}
	if capped == 0 {
		t.Errorf("every host finished although the caps allow %d of %d", 2*dailyCap, rows)
	}
	accepted := checkShared(t, hosts, rate, burst)
	for _, a := range sharedAccounts {
		if accepted[a.phoneNumberID] != dailyCap {
			t.Errorf("account %s: the server accepted %d, want exactly the cap %d", a.name, accepted[a.phoneNumberID], dailyCap)
		}
	}

	// limits status shows what every host counted together.
	var st struct {
		Portfolios []struct {
			Name     string `json:"name"`
			Accounts []struct {
				Name string `json:"name"`
				Used int    `json:"used"`
				Cap  int    `json:"daily_cap"`
			} `json:"accounts"`
		} `json:"portfolios"`
	}
	if err := json.Unmarshal([]byte(hosts[1].OK("limits", "status", "--json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Portfolios) != 1 || st.Portfolios[0].Name != "default" || len(st.Portfolios[0].Accounts) != 2 {
		t.Fatalf("limits status: %+v", st)
	}
	for _, a := range st.Portfolios[0].Accounts {
		if a.Used != dailyCap {
			t.Errorf("limits status: %s used %d, want %d", a.Name, a.Used, dailyCap)
		}
	}

	// A new shared quota day (once, from any host; the others' reset
	// changes nothing) and the same commands again: the rest goes out.
	hosts[2].OK("quota", "reset")
	hosts[0].OK("quota", "reset", "--force")
	if out := hosts[1].OK("quota", "reset").Stdout; !strings.Contains(out, "already open, unchanged") {
		t.Errorf("a second host's reset on the same day must change nothing in the shared limits:\n%s", out)
	}
	for i, p := range runShards(hosts, list, "--stop-when-capped") {
		if res := p.Wait(t); res.Code != 0 {
			t.Errorf("host %d, second day: want exit 0\n%s", i+1, res)
		}
	}
	checkShared(t, hosts, rate, burst)
	got := testproc.Accepted(hosts[0].api.Records())
	if len(got) != rows {
		t.Errorf("the server accepted %d distinct recipients over the two days, want all %d", len(got), rows)
	}
	for _, h := range hosts {
		for _, row := range h.Rows() {
			if row.State != "sent" {
				t.Errorf("%s: %s after the second day", row.Phone, row.State)
			}
		}
	}
}

// TestRedisKilledMidRun: Redis is killed (SIGKILL) while three hosts send,
// and started again. Meanwhile no host claims anything — the requests in
// flight finish and are recorded — and status says what they wait for;
// --stop-when-capped stops none of them. With its data (an append-only
// file) they resume by themselves; without, Redis lost the day's counts and
// they wait, saying so, until `quota reset --force`. Nothing is lost or
// sent twice, and the limits held throughout.
func TestRedisKilledMidRun(t *testing.T) {
	for _, persist := range []bool{true, false} {
		name := map[bool]string{true: "restarted with its data", false: "restarted empty"}[persist]
		t.Run(name, func(t *testing.T) { redisKilledMidRun(t, persist) })
	}
}

func redisKilledMidRun(t *testing.T, persist bool) {
	const (
		rate  = 10.0
		burst = 2
		rows  = 60
	)
	r := redistest.StartWith(t, redistest.Options{Persist: persist})
	hosts := newHosts(t, 3, r.URL(), rate, burst, 1000)
	list := hosts[0].WriteCSV("list.csv", 4915112390000, rows)
	hosts[0].OK("quota", "reset", "--force")
	procs := runShards(hosts, list, "--stop-when-capped")

	api := hosts[0].api
	hosts[0].WaitFor(30*time.Second, "15 requests", func() bool { return len(api.Records()) >= 15 })
	r.Kill()
	killed := time.Now()
	// Requests in flight at the kill finish; after them, nothing.
	time.Sleep(time.Second)
	before := len(api.Records())
	waitLost := func(lost bool) {
		for i, h := range hosts {
			h.WaitFor(10*time.Second, fmt.Sprintf("host %d's status to say it waits for shared limits (lost %v)", i+1, lost), func() bool {
				state, l := h.statusState()
				return state == "waiting for shared limits" && l == lost
			})
		}
		// The text form says why, and what ends it.
		want := map[bool]string{false: "Redis does not answer", true: "quota reset --force"}[lost]
		if res := hosts[0].Run("status"); !strings.Contains(res.Stderr, "waiting for shared limits since") || !strings.Contains(res.Stderr, want) {
			t.Errorf("status while waiting (lost %v) does not say %q:\n%s", lost, want, res.Stderr)
		}
	}
	checkNone := func(when string) {
		t.Helper()
		if n := len(api.Records()); n != before {
			t.Errorf("%d requests reached the server %s (from %d to %d, %v after the kill)", n-before, when, before, n, time.Since(killed))
		}
	}
	waitLost(false)
	checkNone("while Redis was down")
	if before >= rows {
		t.Fatalf("every row was sent before Redis went down; the test proves nothing")
	}
	r.Restart()
	if !persist {
		waitLost(true)
		time.Sleep(time.Second)
		checkNone("while Redis had lost its state")
	}
	if !persist {
		hosts[1].OK("quota", "reset", "--force")
	}
	for i, p := range procs {
		res := p.Wait(t)
		if res.Code != 0 {
			t.Errorf("host %d: want exit 0 after Redis came back\n%s", i+1, res)
		}
		said := strings.Join(strings.Fields(res.Stderr), " ") // a wait's words wrap at 80 columns
		if !strings.Contains(said, "waiting for shared limits: Redis does not answer") {
			t.Errorf("host %d: its progress never said it waited for the shared limits:\n%s", i+1, res.Stderr)
		}
		if !persist && !strings.Contains(said, "quota reset --force") {
			t.Errorf("host %d: its progress never named the forced reset the lost state waits for:\n%s", i+1, res.Stderr)
		}
	}
	accepted := checkShared(t, hosts, rate, burst)
	if got := testproc.Accepted(api.Records()); len(got) != rows {
		t.Errorf("the server accepted %d distinct recipients, want all %d", len(got), rows)
	}
	if !persist {
		return
	}
	// The restarted Redis kept its counts: they add up to what was sent.
	var st struct {
		Portfolios []struct {
			Accounts []struct {
				Number string `json:"phone_number_id"`
				Used   int    `json:"used"`
			} `json:"accounts"`
		} `json:"portfolios"`
	}
	if err := json.Unmarshal([]byte(hosts[0].OK("limits", "status", "--json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Portfolios[0].Accounts {
		if a.Used != accepted[a.Number] {
			t.Errorf("Redis counts %d for %s, the server accepted %d", a.Used, a.Number, accepted[a.Number])
		}
	}
}

// statusState is the state `status --json` gives the host's one campaign,
// and whether it waits for shared limits that lost their state.
func (w *world) statusState() (state string, lost bool) {
	var st struct {
		Campaigns []struct {
			State      string `json:"state"`
			LimitsWait *struct {
				Lost bool `json:"lost"`
			} `json:"limits_wait"`
		} `json:"campaigns"`
	}
	r := w.Run("status", "--json")
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &st) != nil || len(st.Campaigns) != 1 {
		return "", false
	}
	c := st.Campaigns[0]
	return c.State, c.LimitsWait != nil && c.LimitsWait.Lost
}

// TestThreeHostsShareReachThroughRedis: the two numbers are one portfolio
// whose messaging limit is 30 distinct recipients a day; three hosts send
// a shard each of 60 people. The server sees exactly 30, and each host
// either finished its shard or stopped at the limit (exit 3).
func TestThreeHostsShareReachThroughRedis(t *testing.T) {
	const (
		rate  = 10.0
		burst = 3
		limit = 30
		rows  = 60
	)
	r := redistest.Start(t)
	hosts := newHosts(t, 3, r.URL(), rate, burst, 1000)
	for _, h := range hosts {
		h.OK("portfolio", "add", "acme", "--limit", fmt.Sprint(limit), "--margin", "0%")
		for _, a := range sharedAccounts {
			h.OK("account", "set", a.name, "--portfolio", "acme")
		}
	}
	list := hosts[0].WriteCSV("list.csv", 4915112400000, rows)
	hosts[0].OK("quota", "reset", "--force")
	stopped := 0
	for i, p := range runShards(hosts, list, "--stop-when-capped") {
		res := p.Wait(t)
		switch res.Code {
		case 0:
		case 3:
			stopped++
			if !strings.Contains(res.Stderr, "messaging limit") {
				t.Errorf("host %d stopped without naming the messaging limit:\n%s", i+1, res.Stderr)
			}
		default:
			t.Errorf("host %d: want exit 0 or 3\n%s", i+1, res)
		}
	}
	if stopped == 0 {
		t.Errorf("every host finished although %d recipients exceed the limit of %d", rows, limit)
	}
	checkShared(t, hosts, rate, burst)
	if got := testproc.Accepted(hosts[0].api.Records()); len(got) != limit {
		t.Errorf("the server accepted %d distinct recipients, want exactly the portfolio's limit %d", len(got), limit)
	}
	var st struct {
		Portfolios []struct {
			Name  string `json:"name"`
			Reach struct {
				Used    int `json:"used_24h"`
				Allowed int `json:"allowed"`
			} `json:"reach"`
		} `json:"portfolios"`
	}
	if err := json.Unmarshal([]byte(hosts[2].OK("limits", "status", "--json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Portfolios) != 1 || st.Portfolios[0].Name != "acme" || st.Portfolios[0].Reach.Used != limit || st.Portfolios[0].Reach.Allowed != limit {
		t.Errorf("limits status: %+v, want acme with %d of %d", st.Portfolios, limit, limit)
	}
}

// TestHostKilledWhileSharingLimits: one of two hosts is SIGKILLed mid-run
// and the same command run again. Nobody is messaged twice, and Redis
// counted exactly one admission per request the hosts' databases hold —
// a claim admitted but never committed when the process died is asked
// again under the same id after the restart: a replay, not a second spend.
func TestHostKilledWhileSharingLimits(t *testing.T) {
	const (
		rate  = 20.0
		burst = 3
		rows  = 60
	)
	r := redistest.Start(t)
	hosts := newHosts(t, 2, r.URL(), rate, burst, 1000)
	list := hosts[0].WriteCSV("list.csv", 4915112410000, rows)
	hosts[0].OK("quota", "reset", "--force")
	procs := runShards(hosts, list)
	api := hosts[0].api
	hosts[0].WaitFor(30*time.Second, "10 requests", func() bool { return len(api.Records()) >= 10 })
	procs[0].Signal(t, syscall.SIGKILL)
	if res := procs[0].Wait(t); res.Signal != syscall.SIGKILL {
		t.Fatalf("host 1 had already ended: %s", res)
	}
	again := hosts[0].Start(shardRun(list, 1, 2)...)
	for i, p := range []*testproc.Proc{again, procs[1]} {
		if res := p.Wait(t); res.Code != 0 {
			t.Errorf("host %d: want exit 0\n%s", i+1, res)
		}
	}
	recs := api.Records()
	checkNoDuplicates(t, recs)
	states := map[string]int{}
	requests := map[string]int{} // per number, every attempt a host's database holds
	for _, h := range hosts {
		for st, n := range testproc.States(h.Rows()) {
			states[st] += n
		}
		h.Query(`SELECT a.phone_number_id, count(*) FROM attempts t JOIN accounts a ON a.id = t.account_id
			WHERE coalesce(t.class, '') <> 'not-sent' GROUP BY 1`, func(rs *sql.Rows) error {
			var pn string
			var n int
			err := rs.Scan(&pn, &n)
			requests[pn] += n
			return err
		})
	}
	// A row in flight at the kill is unknown: the server may have taken it.
	if acc := len(testproc.Accepted(recs)); states["sent"]+states["unknown"] != rows || acc < states["sent"] || acc > states["sent"]+states["unknown"] {
		t.Errorf("rows %v, the server accepted %d: want every row sent or (killed in flight) unknown", states, acc)
	}
	var st struct {
		Portfolios []struct {
			Accounts []struct {
				Number string `json:"phone_number_id"`
				Used   int    `json:"used"`
			} `json:"accounts"`
		} `json:"portfolios"`
	}
	if err := json.Unmarshal([]byte(hosts[1].OK("limits", "status", "--json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Portfolios[0].Accounts {
		if a.Used != requests[a.Number] {
			t.Errorf("Redis counts %d for %s, the hosts' databases hold %d requests from it", a.Used, a.Number, requests[a.Number])
		}
	}
	t.Logf("rows %v, requests per number %v", states, requests)
}
