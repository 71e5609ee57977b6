//go:build torture

package torture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/testproc"
)

// TestHostsKillPostgres is TestHostsKill on Postgres, the shared queue of
// issue 30: the same seeds and checks, three hosts on one database (a
// fresh one per seed, copied from a migrated template), and Postgres's own
// faults in every seed:
//
//   - the stopped host is stopped inside its sending transaction, holding
//     the claim lock every host's claims take: Postgres ends its session
//     after idle_in_transaction_session_timeout (pgstore's 10 s) and the
//     others go on;
//   - the survivor's sessions are ended server-side (pg_terminate_backend)
//     right after that stop, those idle in its pool and the one waiting
//     for the lock: it goes on;
//   - the rescuer's advisory lock is held, when the dead host's heartbeats
//     are aged, by a session idle inside its transaction, as a host
//     stopped inside its rescue leaves it: nobody rescues while it lives,
//     and the dead host's rows are taken once Postgres ended it.
//
// Without postgres it skips (pgtest says why).
func TestHostsKillPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	srv.Template(t, pgTemplate, func(ctx context.Context, dsn string) error {
		st, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
		if err != nil {
			return err
		}
		return st.Close()
	})
	hostsKill(t, pgHosts(srv))
}

// pgTemplate is the migrated database every seed's is copied from; its
// zone of quota days is UTC, as the processes ask (WASEND_TZ).
const pgTemplate = "torture_hosts"

// The advisory locks of pgstore (tx.go's claimLock, moves.go's
// rescueLock), which this test holds or looks for. Were they to drift,
// no stop would land in the claim lock (the run fails for the fault never
// made) and the rescue would not wait for the held lock (the seed fails).
const (
	claimLock  = 0x7761_7365_6e64_01
	rescueLock = 0x7761_7365_6e64_02
)

// idleInTransaction is pgstore's idle_in_transaction_session_timeout:
// how long a stopped host keeps what its open transaction holds.
const idleInTransaction = 10 * time.Second

// The Postgres faults, as the FIGURES lines count them.
const (
	faultStopInClaim  = "stopped_in_claim_lock"
	faultTerminated   = "survivor_terminated"
	faultRescueLocked = "rescue_lock_held"
)

// pgHosts is TestHostsKillPostgres's database. Each host's processes name
// themselves in their URL (application_name), so the test finds their
// sessions in pg_stat_activity (in the seed's database: seeds run side by
// side on one server with the same host names).
func pgHosts(srv *pgtest.Server) hostsStore {
	return hostsStore{
		scenario: "hosts-kill-postgres",
		seeds:    [2]int{8, 20},
		open: func(w *world) {
			w.DB = srv.NewDB(w.T, pgTemplate)
			st, err := pgstore.Open(w.T.Context(), withApp(w.T, w.DB, "torture"), pgstore.Options{Location: time.UTC})
			if err != nil {
				w.T.Fatal(err)
			}
			w.T.Cleanup(func() { st.Close() })
			w.Reader = st.Reader()
		},
		hostDB:       func(w *world, host string) string { return withApp(w.T, w.DB, host) },
		stop:         stopInClaim,
		age:          pgAgeHeartbeats,
		takeWithin:   20*time.Second + idleInTransaction,
		beforeRescue: holdRescueLock,
		afterStop:    terminateSurvivor,
		faults:       []string{faultStopInClaim, faultTerminated, faultRescueLocked},
	}
}

// withApp is dsn naming its sessions app.
func withApp(t *testing.T, dsn, app string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest's DSN: %v", err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// lockHeld is the condition on pg_locks for an advisory lock on key held
// (granted) by a session; Postgres splits a bigint key into classid (high
// half) and objid (low half).
func lockHeld(key int64) string {
	return fmt.Sprintf("l.locktype = 'advisory' AND l.granted AND l.classid::bigint = %d AND l.objid::bigint = %d AND l.objsubid = 1",
		key>>32, key&0xffff_ffff)
}

// holdsLock reports whether one of app's sessions holds the advisory lock
// key.
func holdsLock(w *world, app string, key int64) bool {
	return count(w, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE `+lockHeld(key)+
		` AND a.application_name = ? AND a.datname = current_database()`, app) > 0
}

// stuckInLock reports whether one of app's sessions holds the advisory
// lock key inside a transaction whose client went quiet: idle in it, twice
// 20 ms apart (a commit already sent is read by then).
func stuckInLock(w *world, app string, key int64) bool {
	q := `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE ` + lockHeld(key) +
		` AND a.application_name = ? AND a.datname = current_database() AND a.state = 'idle in transaction'`
	if count(w, q, app) == 0 {
		return false
	}
	time.Sleep(20 * time.Millisecond)
	return count(w, q, app) > 0
}

// stopInClaim stops host with SIGSTOP inside its sending transaction,
// holding the claim lock, continuing and stopping it again until it does
// (a claim is a few milliseconds of the host's time). After 60 stops it
// stays stopped where it is.
func stopInClaim(w *world, p *testproc.Proc, host string) (int, string) {
	w.T.Helper()
	for tries := 1; ; tries++ {
		p.Signal(w.T, syscall.SIGSTOP)
		if stuckInLock(w, host, claimLock) {
			return tries, faultStopInClaim
		}
		if tries == 60 || p.Exited() {
			return tries, ""
		}
		p.Signal(w.T, syscall.SIGCONT)
		time.Sleep(time.Duration(tries%7) * time.Millisecond)
	}
}

// pgAgeHeartbeats ages host's heartbeats as tryAgeHeartbeats does a
// file's. A stopped host may hold its runner's row inside a transaction:
// the update then waits until Postgres ended that session, so it is given
// the idle timeout on top of wait.
func pgAgeHeartbeats(w *world, host string, wait time.Duration) bool {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(w.T.Context(), wait+idleInTransaction)
	defer cancel()
	_, err := w.Reader.ExecContext(ctx, `UPDATE runners SET heartbeat_at = heartbeat_at - $1 WHERE host = $2`,
		(2 * time.Minute).Nanoseconds(), host)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return false
	}
	if err != nil {
		w.T.Fatalf("age %s's heartbeats: %v", host, err)
	}
	return true
}

// count runs a count(*) query.
func count(w *world, q string, args ...any) int {
	n := 0
	w.Query(q, func(rs *sql.Rows) error { return rs.Scan(&n) }, args...)
	return n
}

// watch polls cond every w.Poll in the background until it holds or
// within has passed, and returns a wait for how long it took (ok false
// when it never held).
func watch(w *world, within time.Duration, cond func() bool) (wait func() (took time.Duration, ok bool)) {
	start := time.Now()
	var (
		took time.Duration
		ok   bool
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Since(start) < within {
			if cond() {
				took, ok = time.Since(start), true
				return
			}
			time.Sleep(w.Poll)
		}
	}()
	return func() (time.Duration, bool) { wg.Wait(); return took, ok }
}

// terminateSurvivor runs once stopped is stopped. When the stop landed in
// the claim lock it checks that Postgres frees the lock within the idle
// timeout and that the survivor claims again (while rows are pending);
// in any case it ends the survivor's sessions from the server
// (pg_terminate_backend): those idle in its pool and those waiting for a
// lock inside a transaction (its claim, behind the stopped host's). It
// must ride it out: it exits 0 like every host, and the seed's judgement
// holds. (A plain statement outside a transaction cut while it runs still
// ends the run with its error: whether it took effect is unknown, so the
// store does not run it again. Those sessions are left alone.)
func terminateSurvivor(w *world, stopped, survivor string, p *testproc.Proc, faults map[string]int) func() {
	t := w.T
	t.Helper()
	inLock := stuckInLock(w, stopped, claimLock)
	pending := count(w, `SELECT count(*) FROM messages WHERE state = 'pending'`)
	claims := count(w, `SELECT count(*) FROM attempts`)
	freed := watch(w, idleInTransaction+20*time.Second, func() bool { return !holdsLock(w, stopped, claimLock) })
	resumed := watch(w, idleInTransaction+20*time.Second, func() bool {
		return count(w, `SELECT count(*) FROM attempts`) > claims
	})
	// Mid-run: once the survivor runs its campaign (a runner registered),
	// not while it opens the database.
	for deadline := time.Now().Add(10 * time.Second); !p.Exited() && time.Now().Before(deadline) &&
		count(w, `SELECT count(*) FROM runners WHERE host = ?`, survivor) == 0; {
		time.Sleep(w.Poll)
	}
	terminated := 0
	if !p.Exited() {
		w.Query(`SELECT count(*) FILTER (WHERE ok) FROM (SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
			WHERE application_name = ? AND datname = current_database() AND (state <> 'active' OR wait_event_type = 'Lock')) s`, func(rs *sql.Rows) error { return rs.Scan(&terminated) }, survivor)
	}
	if terminated > 0 {
		faults[faultTerminated]++
	}
	t.Logf("%s stopped %s; %d rows pending, %d claims made; %d sessions of %s ended by the server",
		stopped, map[bool]string{true: "holding the claim lock", false: "outside the claim lock"}[inLock], pending, claims,
		terminated, survivor)
	return func() {
		t.Helper()
		tookFree, okFree := freed()
		tookClaim, okClaim := resumed()
		if !inLock {
			return
		}
		if !okFree {
			t.Errorf("%s, stopped holding the claim lock, still held it %v later (idle_in_transaction_session_timeout %v)",
				stopped, idleInTransaction+20*time.Second, idleInTransaction)
		} else {
			t.Logf("%s's claim lock freed by Postgres %v after its stop", stopped, tookFree.Round(time.Millisecond))
		}
		switch {
		case pending == 0:
			t.Logf("no row was pending at the stop: the others had nothing to claim")
		case !okClaim:
			t.Errorf("no host claimed a row within %v of %s's stop holding the claim lock, %d rows pending",
				idleInTransaction+20*time.Second, stopped, pending)
		default:
			t.Logf("the others claimed again %v after %s's stop (claim lock freed after %v)", tookClaim.Round(time.Millisecond),
				stopped, tookFree.Round(time.Millisecond))
		}
	}
}

// holdRescueLock takes the rescuer's advisory lock in a transaction of the
// test's and leaves the session idle in it, as a host stopped inside its
// rescue would, before dead's heartbeats are aged. Postgres ends the
// session after the idle timeout. Until then no host may take dead's rows
// (the rescue waits for the lock); after it, they are taken within a
// rescue's period.
func holdRescueLock(w *world, dead string, faults map[string]int) func() {
	t := w.T
	t.Helper()
	ctx := context.Background()
	conn, err := w.Reader.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_xact_lock($1)) l`, int64(rescueLock)).Scan(&pid); err != nil {
		t.Fatalf("take the rescuer's lock: %v", err)
	}
	held := heldBy(w, dead)
	if held > 0 {
		faults[faultRescueLocked]++
	}
	alive := func() bool {
		return count(w, `SELECT count(*) FROM pg_stat_activity WHERE pid = ?`, pid) > 0
	}
	var (
		mu        sync.Mutex
		takenLive int // dead's rows taken while the session lived
	)
	ended := watch(w, idleInTransaction+20*time.Second, func() bool {
		// The rows first: a session alive after the look was alive at it.
		h := heldBy(w, dead)
		live := alive()
		if live && h < held {
			mu.Lock()
			takenLive = held - h
			mu.Unlock()
		}
		return !live
	})
	return func() {
		t.Helper()
		took, ok := ended()
		// The session is gone: its rollback fails, and the connection with it.
		_ = tx.Rollback()
		conn.Close()
		if !ok {
			t.Errorf("the session holding the rescuer's lock lived %v (idle_in_transaction_session_timeout %v)",
				idleInTransaction+20*time.Second, idleInTransaction)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if takenLive > 0 {
			t.Errorf("%d of %s's %d rows in flight were taken while another session held the rescuer's lock", takenLive, dead, held)
		}
		t.Logf("the rescuer's lock held %v by an idle session while %s's %d rows waited", took.Round(time.Millisecond), dead, held)
	}
}
