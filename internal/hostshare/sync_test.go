package hostshare

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// host is one sender's side: its own database and its own connection to
// the shared Redis.
type host struct {
	st     *store.Store
	path   string // the database file
	shared *Shared
	sync   *Sync
	log    *bytes.Buffer
}

func newHost(t *testing.T, srv *redistest.Server) *host {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(ctx, path, driver.Options{Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sh := openShared(t, srv)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return &host{st: st, path: path, shared: sh, sync: NewSync(sh, st, SyncOptions{Log: log}), log: &buf}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// suppress is `wasend suppress add --limits` on this host: Redis, then
// the local database.
func (h *host) suppress(t *testing.T, reason string, phones ...string) {
	t.Helper()
	var shared []Suppression
	var local []campaign.Suppression
	for _, p := range phones {
		shared = append(shared, Suppression{Phone: p, Reason: reason})
		local = append(local, campaign.Suppression{Phone: p, Reason: reason})
	}
	if _, err := h.shared.Suppress(context.Background(), shared, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Suppress(context.Background(), local); err != nil {
		t.Fatal(err)
	}
}

func (h *host) unsuppress(t *testing.T, phones ...string) {
	t.Helper()
	if _, err := h.shared.Unsuppress(context.Background(), phones); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Unsuppress(context.Background(), phones); err != nil {
		t.Fatal(err)
	}
}

func (h *host) pull(t *testing.T) {
	t.Helper()
	if err := h.sync.Pull(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// listed is the host's local list as "phone reason" lines.
func (h *host) listed(t *testing.T) string {
	t.Helper()
	list, err := readmodel.New(h.st).Suppressions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "%s %s\n", s.Phone, s.Reason)
	}
	return b.String()
}

func TestSuppressionsReachOtherHost(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newHost(t, srv), newHost(t, srv)
	// B has a number of its own, listed without --limits: the shared list
	// never removes it for not being there.
	if _, err := b.st.Suppress(context.Background(), []campaign.Suppression{{Phone: "+4915100000099", Reason: "local"}}); err != nil {
		t.Fatal(err)
	}
	b.pull(t)

	steps := []struct {
		name string
		on   func()
		want string // B's list after its next pull
	}{
		{"A suppresses two", func() { a.suppress(t, "replied STOP", "+4915100000001", "+4915100000002") },
			"+4915100000001 replied STOP\n+4915100000002 replied STOP\n+4915100000099 local\n"},
		{"A gives one a new reason", func() { a.suppress(t, "bounced", "+4915100000002") },
			"+4915100000001 replied STOP\n+4915100000002 bounced\n+4915100000099 local\n"},
		{"A removes one", func() { a.unsuppress(t, "+4915100000001") },
			"+4915100000002 bounced\n+4915100000099 local\n"},
		{"A removes B's own number: removed everywhere, as asked", func() { a.unsuppress(t, "+4915100000099") },
			"+4915100000002 bounced\n"},
		{"nothing new", func() {}, "+4915100000002 bounced\n"},
	}
	for _, s := range steps {
		s.on()
		b.pull(t)
		if got := b.listed(t); got != s.want {
			t.Errorf("%s: B lists\n%swant\n%s", s.name, got, s.want)
		}
	}
	// The first time stays the lister's.
	list, _ := readmodel.New(b.st).Suppressions(context.Background())
	if len(list) != 1 || !list[0].CreatedAt.Equal(t0) {
		t.Errorf("B's entry = %+v, want listed at %v", list, t0)
	}
	// A host started later (no version yet) copies the whole list, removals
	// included.
	c := newHost(t, srv)
	if _, err := c.st.Suppress(context.Background(), []campaign.Suppression{{Phone: "+4915100000001"}}); err != nil {
		t.Fatal(err)
	}
	c.pull(t)
	if got, want := c.listed(t), "+4915100000002 bounced\n"; got != want {
		t.Errorf("new host C lists\n%swant\n%s", got, want)
	}
}

// TestRestartPullsOnlyChanges: a sender that starts again on the same
// database goes on from the version it recorded, not from the start.
func TestRestartPullsOnlyChanges(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a, b := newHost(t, srv), newHost(t, srv)
	a.suppress(t, "STOP", "+4915100000001")
	b.pull(t)
	// Edited here since: a replay of the whole log would undo it.
	if _, err := b.st.Suppress(ctx, []campaign.Suppression{{Phone: "+4915100000001", Reason: "edited here"}}); err != nil {
		t.Fatal(err)
	}
	a.suppress(t, "new", "+4915100000002")
	restarted := NewSync(b.shared, b.st, SyncOptions{})
	if err := restarted.Pull(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := b.listed(t), "+4915100000001 edited here\n+4915100000002 new\n"; got != want {
		t.Errorf("B after a restart lists\n%swant\n%s", got, want)
	}
}

func TestSuppressionsPagedPull(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newHost(t, srv), newHost(t, srv)
	var phones []string
	for i := range page*2 + 7 {
		phones = append(phones, fmt.Sprintf("+4917000%05d", i))
	}
	a.suppress(t, "", phones...)
	b.pull(t)
	list, err := readmodel.New(b.st).Suppressions(context.Background())
	if err != nil || len(list) != len(phones) {
		t.Fatalf("B has %d numbers (%v), want %d", len(list), err, len(phones))
	}
}

func TestConfigReachesOtherHost(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a, b := newHost(t, srv), newHost(t, srv)
	// B set its own warm tier and nothing through Redis: kept.
	ownWarm := campaign.Limits{Rate: 0.5, Burst: 2, DailyCap: 20}
	if err := b.st.SetTier(ctx, "warm", ownWarm); err != nil {
		t.Fatal(err)
	}
	b.pull(t)

	newTier := campaign.Limits{Rate: 0.1, Burst: 5, DailyCap: 80}
	if err := a.shared.SetTier(ctx, "new", newTier); err != nil {
		t.Fatal(err)
	}
	if err := a.shared.SetGlobal(ctx, true, ratelimit.Limit{Rate: 2, Burst: 10}); err != nil {
		t.Fatal(err)
	}
	b.pull(t)
	tiers, err := readmodel.New(b.st).Tiers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]campaign.Limits{}
	for _, tr := range tiers {
		got[tr.Name] = tr.Limits
	}
	if got["new"] != newTier || got["warm"] != ownWarm || got["active"] != campaign.DefaultTiers["active"] {
		t.Errorf("B's tiers = %+v; want new %+v, its own warm, default active", got, newTier)
	}
	l, tokens, on, err := readmodel.New(b.st).GlobalLimit(ctx)
	if err != nil || !on || l != (ratelimit.Limit{Rate: 2, Burst: 10}) || tokens != 10 {
		t.Errorf("B's global = %+v tokens %v on %v (%v), want on 2/s burst 10, full", l, tokens, on, err)
	}
	if !strings.Contains(b.log.String(), "tier changed on another host") {
		t.Errorf("B's log does not say the tier changed:\n%s", b.log)
	}

	if err := a.shared.SetGlobal(ctx, false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	b.pull(t)
	if _, _, on, _ := readmodel.New(b.st).GlobalLimit(ctx); on {
		t.Error("B's global limit still on after A turned it off")
	}
}

func TestRedisDownThenUp(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a, b := newHost(t, srv), newHost(t, srv)
	a.suppress(t, "STOP", "+4915100000001", "+4915100000002")
	b.pull(t)

	// Redis dies: B's pulls fail, and B keeps every number it had.
	srv.Kill()
	if err := b.sync.Pull(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Pull with Redis down = %v, want ErrUnavailable", err)
	}
	if got, want := b.listed(t), "+4915100000001 STOP\n+4915100000002 STOP\n"; got != want {
		t.Errorf("B lists after a failed pull\n%swant\n%s", got, want)
	}

	// It comes back empty (no persistence): nothing B had is dropped for
	// being absent; new changes reach B from version 1 again, removals too.
	srv.Restart()
	b.pull(t)
	a.suppress(t, "new", "+4915100000003")
	a.unsuppress(t, "+4915100000002")
	b.pull(t)
	if got, want := b.listed(t), "+4915100000001 STOP\n+4915100000003 new\n"; got != want {
		t.Errorf("B lists after Redis came back empty\n%swant\n%s", got, want)
	}
	if n := strings.Count(b.log.String(), "started anew"); n != 1 {
		t.Errorf("B's log warns %d times that the list started anew, want once:\n%s", n, b.log)
	}
	// A restart of B's sender knows the new epoch: no second warning, and
	// nothing B had is dropped.
	b.sync = NewSync(b.shared, b.st, SyncOptions{Log: slog.New(slog.NewTextHandler(&lockedWriter{w: b.log}, nil))})
	b.pull(t)
	if n := strings.Count(b.log.String(), "started anew"); n != 1 {
		t.Errorf("after a restart B's log warns %d times that the list started anew, want once:\n%s", n, b.log)
	}
	if got, want := b.listed(t), "+4915100000001 STOP\n+4915100000003 new\n"; got != want {
		t.Errorf("B lists after a restart\n%swant\n%s", got, want)
	}
}

// TestRunLogsOutageOnce drives the loop by hand-fed polls: a Redis outage
// is logged once, its end once, and changes made meanwhile arrive.
func TestRunLogsOutageOnce(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newHost(t, srv), newHost(t, srv)
	polls := make(chan time.Time)
	pulled := make(chan struct{})
	b.sync.after = func(time.Duration) <-chan time.Time {
		pulled <- struct{}{} // a pull finished; the test decides when the next starts
		return polls
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.sync.Run(ctx); close(done) }()
	poll := func() { polls <- t0; <-pulled }
	<-pulled

	srv.Kill()
	poll()
	poll()
	poll()
	srv.Restart()
	a.suppress(t, "", "+4915100000005")
	// go-redis's pool, after failed dials, redials on its own about once a
	// second: B's pulls fail until it has.
	for deadline := time.Now().Add(10 * time.Second); b.listed(t) == "" && time.Now().Before(deadline); {
		poll()
		time.Sleep(10 * time.Millisecond) // waiting for a reconnect, not for a rate
	}
	cancel()
	<-done

	logged := b.log.String()
	if n := strings.Count(logged, "not updated"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, logged)
	}
	// Push and pull both failed: their errors share one readable line.
	if strings.Contains(logged, `\n`) {
		t.Errorf("log holds a literal \\n inside a line:\n%s", logged)
	}
	if n := strings.Count(logged, "updated again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, logged)
	}
	if got, want := b.listed(t), "+4915100000005 \n"; got != want {
		t.Errorf("B lists\n%swant\n%s", got, want)
	}
}

// optOut lists phones as the store does when an answer or a status
// webhook reports error 131050 (claims.go applyEffects, webhook.go
// asyncEffects): that very statement, from another connection to the
// host's database, so nothing but the suppressions table tells the sync.
func (h *host) optOut(t *testing.T, phones ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+h.path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range phones {
		if _, err := db.Exec(`INSERT OR IGNORE INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)`,
			p, "error 131050 in campaign 1", t0.Add(time.Minute).UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOwnSuppressionsReachOtherHost: what host A lists by itself reaches
// host B through the shared list — an opt-out whatever the shared list
// knew of the number, a number listed by hand only if the shared list
// never knew it (a removal made for every host stays) — also when Redis
// was down when it happened, and when A's sender started again meanwhile.
func TestOwnSuppressionsReachOtherHost(t *testing.T) {
	srv := redistest.StartWith(t, redistest.Options{Persist: true})
	ctx := context.Background()
	a, b := newHost(t, srv), newHost(t, srv)
	const (
		removedOnce = "+4915100000001" // listed and removed with --limits before
		removedTwo  = "+4915100000002"
		optOut      = "+4915100000003"
		byHand      = "+4915100000004"
		duringOut   = "+4915100000005"
	)
	a.suppress(t, "STOP", removedOnce, removedTwo)
	a.unsuppress(t, removedOnce, removedTwo)
	a.pull(t)
	b.pull(t)

	steps := []struct {
		name  string
		on    func()
		wantA string
		wantB string // after A's poll, then B's
	}{
		{"opt-outs on A, one of a number removed everywhere before", func() { a.optOut(t, optOut, removedOnce) },
			"+4915100000001 error 131050 in campaign 1\n+4915100000003 error 131050 in campaign 1\n",
			"+4915100000001 error 131050 in campaign 1\n+4915100000003 error 131050 in campaign 1\n"},
		{"listed by hand on A without --limits: the new number goes up, the removed one stays A's", func() {
			if _, err := a.st.Suppress(ctx, []campaign.Suppression{{Phone: byHand, Reason: "called in"}, {Phone: removedTwo, Reason: "by hand"}}); err != nil {
				t.Fatal(err)
			}
		},
			"+4915100000001 error 131050 in campaign 1\n+4915100000002 by hand\n+4915100000003 error 131050 in campaign 1\n+4915100000004 called in\n",
			"+4915100000001 error 131050 in campaign 1\n+4915100000003 error 131050 in campaign 1\n+4915100000004 called in\n"},
	}
	for _, s := range steps {
		s.on()
		a.pull(t)
		b.pull(t)
		if got := a.listed(t); got != s.wantA {
			t.Errorf("%s: A lists\n%swant\n%s", s.name, got, s.wantA)
		}
		if got := b.listed(t); got != s.wantB {
			t.Errorf("%s: B lists\n%swant\n%s", s.name, got, s.wantB)
		}
	}
	if !strings.Contains(a.log.String(), "put on the shared suppression list") {
		t.Errorf("A's log does not say it pushed:\n%s", a.log)
	}
	// The first time listed stays A's.
	if list, _ := readmodel.New(b.st).Suppressions(ctx); len(list) != 3 || !list[1].CreatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("B's list = %+v, want the opt-out listed when A recorded it", list)
	}

	// Redis down when the opt-out is recorded: recording does not need it,
	// the push fails and waits; A's sender starts again meanwhile; Redis
	// comes back and the next poll pushes.
	srv.Kill()
	a.optOut(t, duringOut)
	if err := a.sync.Pull(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("A's pull with Redis down = %v, want ErrUnavailable", err)
	}
	srv.Restart()
	a.sync = NewSync(a.shared, a.st, SyncOptions{})
	b.pull(t)
	if strings.Contains(b.listed(t), duringOut) {
		t.Fatal("B has the number before A pushed it: the test proves nothing")
	}
	a.pull(t)
	b.pull(t)
	if !strings.Contains(b.listed(t), duringOut+" error 131050") {
		t.Errorf("B lists after Redis came back\n%swant %s too", b.listed(t), duringOut)
	}
	if rest, err := a.st.ToPush(ctx, 10); err != nil || len(rest) != 0 {
		t.Errorf("A's outbox after the push = %+v, %v; want empty", rest, err)
	}
}

// TestPushTwiceChangesNothing: a push repeated (its reply lost, or the
// process died before the outbox was emptied) lists nothing again and
// writes no new version, so no host pulls it twice.
func TestPushTwiceChangesNothing(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := newHost(t, srv)
	push := []Pushed{
		{Suppression: Suppression{Phone: "+4915100000001", Reason: "error 131050", CreatedAt: t0}},
		{Suppression: Suppression{Phone: "+4915100000002", Reason: "by hand", CreatedAt: t0}, IfUnknown: true},
		{Suppression: Suppression{Phone: "not a number"}},
	}
	for i, want := range []int{2, 0} {
		added, err := a.shared.Push(ctx, push)
		if err != nil || added != want {
			t.Fatalf("push %d: added %d, %v; want %d", i+1, added, err, want)
		}
	}
	_, changes, err := a.shared.SuppressionChanges(ctx, 0, 10)
	if err != nil || len(changes) != 2 || changes[1].Version != 2 {
		t.Errorf("changes after two pushes = %+v, %v; want 2, versions 1 and 2", changes, err)
	}
}

// TestRedisLostDataHostsFillItAgain: a Redis that comes back empty gets
// each host's list again from the hosts themselves.
func TestRedisLostDataHostsFillItAgain(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newHost(t, srv), newHost(t, srv)
	a.suppress(t, "STOP", "+4915100000001")
	a.optOut(t, "+4915100000002")
	a.pull(t)
	b.pull(t)
	srv.Kill()
	srv.Restart() // empty
	c := newHost(t, srv)
	for range 2 { // the first poll notices the new list, the next fills it
		a.pull(t)
		b.pull(t)
	}
	c.pull(t)
	if got, want := c.listed(t), "+4915100000001 STOP\n+4915100000002 error 131050 in campaign 1\n"; got != want {
		t.Errorf("a host new after Redis lost its data lists\n%swant\n%s", got, want)
	}
}
