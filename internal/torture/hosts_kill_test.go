//go:build torture

package torture

import (
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
)

// TestHostsKill (issue 30, item 3) runs, per seed, three `campaign run`
// processes as three hosts (WASEND_HOST) on one database file against a
// faulty sandbox, kills one with SIGKILL and stops another with SIGSTOP at
// seeded moments, lets the others take their rows, continues the stopped
// one, and judges from the sandbox's record: nobody accepted twice, every
// row settled and true to the record, no bucket overdrawn, the store's
// counts intact. A host's death is its heartbeat going stale (30 s, no
// flag shortens it): the test ages the dead and the stopped host's
// heartbeats in the database instead of waiting, as if that time had
// passed for them, so a seed takes seconds. Subtests are named by their
// seed; -torture.seed=N replays the run whose first seed is N.
// TestHostsKillPostgres is the same run on Postgres.
func TestHostsKill(t *testing.T) {
	hostsKill(t, sqliteHosts)
}

func hostsKill(t *testing.T, db hostsStore) {
	seeds := size(db.seeds[0], db.seeds[1])
	base := testSeed(t)
	var (
		mu       sync.Mutex
		total    figures
		inFlight int // hosts killed or stopped holding rows in flight
		faults   = map[string]int{}
	)
	start := time.Now()
	// Four seeds at a time: a seed mostly waits (for its hosts' rescue
	// and their last heartbeats), so they share the machine well.
	t.Run("seeds", func(t *testing.T) {
		sem := make(chan struct{}, 4)
		var wg sync.WaitGroup
		for i := range seeds {
			seed := base + uint64(i)
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					f, flight, seen := hostsKillSeed(t, db, seed)
					mu.Lock()
					defer mu.Unlock()
					inFlight += flight
					for k, v := range seen {
						faults[k] += v
					}
					total.requests += f.requests
					total.accepted += f.accepted
					total.sent += f.sent
					total.failed += f.failed
					total.unknown += f.unknown
					total.duplicates += f.duplicates
					total.lost += f.lost
					total.buckets.server = max(total.buckets.server, f.buckets.server)
					total.buckets.unexplained = max(total.buckets.unexplained, f.buckets.unexplained)
					total.buckets.claims = max(total.buckets.claims, f.buckets.claims)
				})
			}()
		}
		wg.Wait()
	})
	if inFlight == 0 {
		t.Error("no host was killed or stopped holding rows in flight; the run proved nothing")
	}
	for _, want := range db.faults {
		if faults[want] == 0 && !t.Failed() {
			t.Errorf("no seed injected the fault %q; the run proved nothing about it", want)
		}
	}
	report(t, db.scenario, total, fmt.Sprintf("in_flight=%d seeds=%d first_seed=%d elapsed=%v%s", inFlight, seeds, base,
		time.Since(start).Round(time.Millisecond), faultFigures(faults)))
}

// hostsKillSeed is one seed's run on db; it returns its figures, how many
// of its two hosts were killed or stopped holding rows in flight, and the
// driver's faults it injected.
func hostsKillSeed(t *testing.T, db hostsStore, seed uint64) (figures, int, map[string]int) {
	var (
		n     = size(80, 400)
		lim   = limit{rate: 25, burst: 5}
		hosts = []string{"host-a", "host-b", "host-c"}
	)
	rng := rand.New(rand.NewPCG(seed, 3))
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed), "--latency", "40ms±30ms",
		"--slow", "0.1", "--slow-delay", "300ms", "--drop", "0.02", "--server-error", "0.02")
	db.open(w)
	for _, a := range threeAccounts[:2] {
		w.OK("account", "add", a.name, "--phone-number-id", a.phoneNumberID, "--tier", "active", "--token-env", tokenEnv)
		w.OK("account", "set", a.name, "--rate", fmt.Sprint(lim.rate), "--burst", fmt.Sprint(lim.burst), "--daily-cap", "100000")
	}
	csv := w.WriteCSV("hosts.csv", 4915112620000, n)
	w.OK("campaign", "import", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name")

	procs := make([]*testproc.Proc, len(hosts))
	for i, h := range hosts {
		procs[i] = w.StartEnv(append(w.Env(), "WASEND_HOST="+h),
			append([]string{"--db", db.hostDB(w, h), "campaign", "run", "--resume", "1", "--workers", "4"}, fastFailure...)...)
	}
	start := time.Now()
	dead := rng.IntN(len(hosts))
	stopped := (dead + 1 + rng.IntN(len(hosts)-1)) % len(hosts)
	survivor := 3 - dead - stopped
	killAt := time.Duration(200+rng.IntN(1000)) * time.Millisecond
	stopAt := time.Duration(200+rng.IntN(1000)) * time.Millisecond
	faults := map[string]int{}
	var checks []func()

	// Each fault lands at its seeded moment, or soon after once the host
	// holds rows in flight (start-up on a loaded machine takes a while).
	inFlight := 0
	holding := func(i int) func() bool {
		deadline := time.Now().Add(3 * time.Second)
		return func() bool { return heldBy(w, hosts[i]) > 0 || procs[i].Exited() || time.Now().After(deadline) }
	}
	kill := func() {
		time.Sleep(time.Until(start.Add(killAt)))
		w.WaitFor(5*time.Second, hosts[dead]+" to hold rows", holding(dead))
		if !procs[dead].Exited() {
			procs[dead].Signal(t, syscall.SIGKILL)
		}
		r := procs[dead].Wait(t)
		checkOutput(t, hosts[dead], r)
		if r.Signal != syscall.SIGKILL && r.Code != 0 {
			t.Errorf("%s ended before its kill: %s", hosts[dead], r)
		}
		held := heldBy(w, hosts[dead])
		if held > 0 {
			inFlight++
		}
		if db.beforeRescue != nil {
			checks = append(checks, db.beforeRescue(w, hosts[dead], faults))
		}
		ageHeartbeats(w, db, hosts[dead])
		t.Logf("%s killed %v after the start holding %d rows (%s)", hosts[dead], time.Since(start).Round(time.Millisecond), held,
			map[bool]string{true: "killed", false: "it had ended"}[r.Signal == syscall.SIGKILL])
	}
	wasStopped := false
	stop := func() {
		time.Sleep(time.Until(start.Add(stopAt)))
		for tries := 0; ; tries++ {
			w.WaitFor(5*time.Second, hosts[stopped]+" to hold rows", holding(stopped))
			if procs[stopped].Exited() {
				t.Logf("%s ended before its stop at %v", hosts[stopped], stopAt)
				return
			}
			stops, how := db.stop(w, procs[stopped], hosts[stopped])
			held := heldBy(w, hosts[stopped])
			if held == 0 && tries < 5 {
				procs[stopped].Signal(t, syscall.SIGCONT) // between batches: again
				continue
			}
			if held > 0 {
				inFlight++
			}
			wasStopped = true
			if how != "" {
				faults[how]++
			}
			if db.afterStop != nil {
				checks = append(checks, db.afterStop(w, hosts[stopped], hosts[survivor], procs[survivor], faults))
			}
			// A stop can still land inside a write the lock probe missed:
			// the host then holds the write lock, so it goes on and is
			// stopped again until its heartbeats can be aged.
			for again := 0; !db.age(w, hosts[stopped], 3*time.Second); again++ {
				if again == 5 {
					t.Fatalf("%s held the write lock at each of %d stops", hosts[stopped], again+1)
				}
				procs[stopped].Signal(t, syscall.SIGCONT)
				more, _ := db.stop(w, procs[stopped], hosts[stopped])
				stops += more
			}
			t.Logf("%s stopped %v after the start (stop %d, try %d%s) holding %d rows", hosts[stopped], time.Since(start).Round(time.Millisecond),
				stops, tries+1, map[bool]string{true: ", " + how, false: ""}[how != ""], held)
			return
		}
	}
	if killAt < stopAt {
		kill()
		stop()
	} else {
		stop()
		kill()
	}
	if wasStopped {
		// The others take its rows at their next rescue, unless none is
		// left to: then it finishes them itself once continued.
		deadline := time.Now().Add(db.takeWithin)
		for heldBy(w, hosts[stopped]) > 0 && !procs[survivor].Exited() {
			if time.Now().After(deadline) {
				// What the survivor was doing: Go prints every goroutine's
				// stack on SIGQUIT.
				procs[survivor].Signal(t, syscall.SIGQUIT)
				r := procs[survivor].Wait(t)
				t.Errorf("%s's rows not taken by %s within %v of its stop; runners %v; %s's stacks:\n%s", hosts[stopped],
					hosts[survivor], db.takeWithin, runners(w), hosts[survivor], r.Stderr)
				break
			}
			time.Sleep(w.Poll)
		}
		procs[stopped].Signal(t, syscall.SIGCONT)
	}
	for i, p := range procs {
		if i == dead {
			continue
		}
		r := p.Wait(t)
		checkOutput(t, hosts[i], r)
		if r.Code != 0 {
			t.Errorf("%s: %s", hosts[i], r)
		}
	}
	elapsed := time.Since(start)
	for _, check := range checks {
		check()
	}

	recs := w.api.Records(t)
	rows := w.Rows()
	if len(rows) != n {
		t.Errorf("the database holds %d rows, want the %d of %s", len(rows), n, csv)
	}
	f := judge(t, rows, recs, false)
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	if f.sent+f.failed+f.unknown != n {
		t.Errorf("sent %d + failed %d + unknown %d ≠ %d recipients", f.sent, f.failed, f.unknown, n)
	}
	w.CheckCounts("every host ended")
	report(t, "hosts-kill seed", f, fmt.Sprintf("seed=%d killed=%s@%v stopped=%s@%v elapsed=%v%s", seed, hosts[dead], killAt,
		hosts[stopped], stopAt, elapsed.Round(time.Millisecond), faultFigures(faults)))
	return f, inFlight, faults
}

// faultFigures lists the driver's faults injected, for a FIGURES line.
func faultFigures(faults map[string]int) string {
	var out string
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		out += fmt.Sprintf(" %s=%d", k, faults[k])
	}
	return out
}

// hostsStore is the database TestHostsKill's hosts share, by driver: how
// a seed gets one, how a host is stopped and its heartbeats aged, and the
// faults of the driver's own (Postgres's, in pgfaults_test.go).
type hostsStore struct {
	scenario string // the FIGURES line's name
	seeds    [2]int // seeds in the short and the full run
	// open points w at a fresh database for the seed.
	open func(w *world)
	// hostDB is the --db of host's processes.
	hostDB func(w *world, host string) string
	// stop stops p (host) with SIGSTOP at a moment the driver's fault
	// wants, and returns the stops it took and the fault it made ("" for
	// a plain stop).
	stop func(w *world, p *testproc.Proc, host string) (int, string)
	// age moves host's runners' last heartbeat two minutes back; false
	// when the database stayed locked for wait.
	age func(w *world, host string, wait time.Duration) bool
	// takeWithin bounds how long the survivor may take to take a stopped
	// host's rows.
	takeWithin time.Duration
	// beforeRescue, when set, runs after host's kill, before its
	// heartbeats are aged; afterStop, once stopped is stopped. Each may
	// inject a fault, counting it in faults, and returns the check the
	// seed runs once every host ended.
	beforeRescue func(w *world, dead string, faults map[string]int) func()
	afterStop    func(w *world, stopped, survivor string, p *testproc.Proc, faults map[string]int) func()
	// faults are the faults that at least one seed of a run must inject.
	faults []string
}

// sqliteHosts is TestHostsKill's database: one SQLite file.
var sqliteHosts = hostsStore{
	scenario: "hosts-kill",
	seeds:    [2]int{20, 60},
	open:     func(*world) {},
	hostDB:   func(w *world, _ string) string { return w.DB },
	stop: func(w *world, p *testproc.Proc, _ string) (int, string) {
		return w.StopOutsideWrite(p), ""
	},
	age:        tryAgeHeartbeats,
	takeWithin: 20 * time.Second,
}

// ageHeartbeats moves host's runners' last heartbeat two minutes back, as
// if the stale period had passed since: the others take its rows at their
// next rescue. Only for a host that cannot beat: killed or stopped.
func ageHeartbeats(w *world, db hostsStore, host string) {
	w.T.Helper()
	if !db.age(w, host, 10*time.Second) {
		w.T.Fatalf("age %s's heartbeats: the database stayed locked", host)
	}
}

// tryAgeHeartbeats is ageHeartbeats on a SQLite file, false when the
// write lock stayed taken for wait.
func tryAgeHeartbeats(w *world, host string, wait time.Duration) bool {
	w.T.Helper()
	db, err := sql.Open("sqlite3", fmt.Sprintf("file:%s?_busy_timeout=%d", w.DB, wait.Milliseconds()))
	if err != nil {
		w.T.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`UPDATE runners SET heartbeat_at = heartbeat_at - ? WHERE host = ?`, (2 * time.Minute).Nanoseconds(), host)
	if err != nil && strings.Contains(err.Error(), "locked") {
		return false
	}
	if err != nil {
		w.T.Fatalf("age %s's heartbeats: %v", host, err)
	}
	return true
}

// runners lists the registered runners with their heartbeat's age.
func runners(w *world) []string {
	var out []string
	w.Query(`SELECT id, heartbeat_at FROM runners ORDER BY id`, func(rs *sql.Rows) error {
		var id string
		var beat int64
		err := rs.Scan(&id, &beat)
		out = append(out, fmt.Sprintf("%s beat %v ago", id, time.Since(time.Unix(0, beat)).Round(time.Millisecond)))
		return err
	})
	return out
}

// heldBy counts the rows host holds in flight (its runners' ids start with
// its name).
func heldBy(w *world, host string) int {
	n := 0
	w.Query(`SELECT count(*) FROM messages WHERE state = 'sending' AND runner_id LIKE ?`, func(rs *sql.Rows) error {
		return rs.Scan(&n)
	}, host+"/%")
	return n
}
