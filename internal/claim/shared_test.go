package claim

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// sharedHost is one "host": its own database, sharing limits through one
// Redis with the others.
type sharedHost struct {
	st   *store.Store
	pool *redisgate.Pool
	camp campaign.Campaign
}

// newSharedHosts opens n databases with the same accounts (the same phone
// number ids) and a campaign each, all sharing limits through r. Each
// host's campaign sends its own template to the same numbers: one message
// to the same people from two hosts is the repeat guard's business
// (TestSharedClaimsGuardRepeatsAcrossHosts), not these tests'.
func newSharedHosts(t *testing.T, r *redistest.Server, n int, accts map[string]campaign.Overrides, rows int) []sharedHost {
	t.Helper()
	hosts := newSharedHostsOneMessage(t, r, n, accts, rows)
	for i, h := range hosts {
		if err := storetest.Exec(t.Context(), h.st.Path(), `UPDATE campaigns SET template = ? WHERE id = ?`, fmt.Sprint("hello_", i), h.camp.ID); err != nil {
			t.Fatal(err)
		}
	}
	return hosts
}

// newSharedHostsOneMessage is newSharedHosts with one message on every
// host: the same file run on each.
func newSharedHostsOneMessage(t *testing.T, r *redistest.Server, n int, accts map[string]campaign.Overrides, rows int) []sharedHost {
	t.Helper()
	var out []sharedHost
	for range n {
		st := openAt(t, filepath.Join(t.TempDir(), "wasend.db"), newFakeClock())
		for _, name := range []string{"a", "b"} {
			if o, ok := accts[name]; ok {
				mustAccount(t, st, name, campaign.TierNew, o)
			}
		}
		pool, err := redisgate.Dial(r.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		if err := st.ShareLimits(t.Context(), pool, redisgate.Unavailable); err != nil {
			t.Fatal(err)
		}
		out = append(out, sharedHost{st: st, pool: pool, camp: mustCampaign(t, st, "shared", rows)})
	}
	return out
}

// startDay starts the shared state as `quota reset --force` does.
func startDay(t *testing.T, h sharedHost, accts ...string) {
	t.Helper()
	g, err := h.pool.Gate(driver.DefaultPortfolio)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range accts {
		names = append(names, driver.GateAccount("pn-"+a))
	}
	if _, err := g.ResetQuota(t.Context(), limits.ResetRequest{Accounts: names, Today: campaign.QuotaDay(t0, h.st.Location()), Force: true}); err != nil {
		t.Fatal(err)
	}
}

// drain claims from every host in turn until each waits; it returns the
// claims per account and each host's last wait.
func drain(t *testing.T, hosts []sharedHost) (map[string]int, []*campaign.WaitError) {
	t.Helper()
	got := map[string]int{}
	waits := make([]*campaign.WaitError, len(hosts))
	for open := len(hosts); open > 0; {
		open = 0
		for i, h := range hosts {
			if waits[i] != nil {
				continue
			}
			cs, err := New(h.st).ClaimN(t.Context(), h.camp.ID, "r1", t0, 2)
			var we *campaign.WaitError
			switch {
			case errors.As(err, &we):
				waits[i] = we
				continue
			case err != nil:
				t.Fatalf("host %d: %v", i, err)
			}
			open++
			for _, c := range cs {
				got[c.Account.Name]++
				if c.Shared == nil || c.Shared.Account != driver.GateAccount(c.Account.PhoneNumberID) || c.Shared.Portfolio != driver.DefaultPortfolio {
					t.Fatalf("claim %+v: shared admission %+v", c, c.Shared)
				}
			}
		}
	}
	return got, waits
}

func TestSharedClaimsKeepLimitsAcrossHosts(t *testing.T) {
	r := redistest.Start(t)
	tests := []struct {
		name     string
		accts    map[string]campaign.Overrides
		global   *ratelimit.Limit
		want     map[string]int
		wantWait campaign.WaitReason
	}{
		{
			name:     "buckets bind: each account's burst, whatever host asks",
			accts:    map[string]campaign.Overrides{"a": limited(0.001, 3, 100), "b": limited(0.001, 2, 100)},
			want:     map[string]int{"a": 3, "b": 2},
			wantWait: campaign.WaitTokens,
		},
		{
			name:     "caps bind: each account's cap exactly",
			accts:    map[string]campaign.Overrides{"a": limited(0.001, 50, 4), "b": limited(0.001, 50, 1)},
			want:     map[string]int{"a": 4, "b": 1},
			wantWait: campaign.WaitCapped,
		},
		{
			name:     "the global bucket binds over both accounts",
			accts:    map[string]campaign.Overrides{"a": limited(0.001, 50, 100), "b": limited(0.001, 50, 100)},
			global:   &ratelimit.Limit{Rate: 0.001, Burst: 5},
			want:     map[string]int{"a": 3, "b": 2},
			wantWait: campaign.WaitGlobal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.Client(t).FlushAll(t.Context())
			hosts := newSharedHosts(t, r, 3, tt.accts, 10)
			if tt.global != nil {
				for _, h := range hosts {
					if err := h.st.SetGlobalLimit(t.Context(), true, *tt.global); err != nil {
						t.Fatal(err)
					}
				}
			}
			startDay(t, hosts[0], "a", "b")
			got, waits := drain(t, hosts)
			for name, n := range tt.want {
				if got[name] != n {
					t.Errorf("%s sent %d across the hosts, want %d (all: %v)", name, got[name], n, got)
				}
			}
			for i, w := range waits {
				if w.Reason != tt.wantWait {
					t.Errorf("host %d waits for %s, want %s", i, w.Reason, tt.wantWait)
				}
			}
			// The local buckets are not what decided: untouched.
			for _, h := range hosts {
				if a := accountByName(t, h.st, "a"); a.Tokens != float64(*tt.accts["a"].Burst) {
					t.Errorf("local bucket of a spent to %v", a.Tokens)
				}
			}
		})
	}
}

func TestSharedClaimFailsClosed(t *testing.T) {
	r := redistest.StartWith(t, redistest.Options{Persist: true})
	ctx := t.Context()
	hosts := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(0.001, 50, 3)}, 5)
	h := hosts[0]

	wantWait := func(reason campaign.WaitReason, pending, attempts int) {
		t.Helper()
		_, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 5)
		var we *campaign.WaitError
		if !errors.As(err, &we) || we.Reason != reason || !we.Until.Equal(t0.Add(campaign.LimitsPoll)) {
			t.Fatalf("claim: %v, want a wait for %s until the next poll", err, reason)
		}
		if n := countRows(t, h.st, `SELECT count(*) FROM messages WHERE state = 'pending'`); n != pending {
			t.Fatalf("%d rows pending, want %d: nothing is claimed", n, pending)
		}
		if n := countRows(t, h.st, `SELECT count(*) FROM attempts`); n != attempts {
			t.Fatalf("%d attempts, want %d", n, attempts)
		}
		w, err := readmodel.New(h.st).LimitsWait(ctx, h.camp.ID)
		if err != nil || w.Reason != reason || w.Since.IsZero() || w.Error == "" {
			t.Fatalf("noted wait %+v, %v; want %s", w, err, reason)
		}
		if c, err := h.st.Campaign(ctx, h.camp.ID); err != nil || c.PauseReason != "" {
			t.Fatalf("campaign %+v, %v: want it not paused", c, err)
		}
	}

	// A Redis that never started a quota day holds no state: nothing goes.
	wantWait(campaign.WaitLimitsLost, 5, 0)
	startDay(t, h, "a")
	cs, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 2)
	if err != nil || len(cs) != 2 {
		t.Fatalf("claim after the reset: %d, %v", len(cs), err)
	}
	if w, _ := readmodel.New(h.st).LimitsWait(ctx, h.camp.ID); !w.Since.IsZero() {
		t.Errorf("wait still noted after a claim: %+v", w)
	}

	// Redis killed: rows in flight are recorded locally, a refund waits
	// in the database, nothing more is claimed.
	r.Kill()
	if err := record(ctx, h.st, cs[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatalf("record while Redis is down: %v", err)
	}
	if err := record(ctx, h.st, cs[1], "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0, Refund: true}, t0); err != nil {
		t.Fatalf("record a refund while Redis is down: %v", err)
	}
	if n, err := pendingRefunds(ctx, h.st); err != nil || n != 1 {
		t.Fatalf("%d refunds queued, %v; want 1", n, err)
	}
	wantWait(campaign.WaitLimits, 4, 2)

	// Back with its data: the refund is given back once, and the cap of 3
	// takes exactly 2 more (1 sent, the refunded one not counted).
	r.Restart()
	got, _ := drain(t, hosts)
	if got["a"] != 2 {
		t.Errorf("claimed %d after the restart, want 2 (cap 3, 1 sent, 1 refunded)", got["a"])
	}
	if n, err := pendingRefunds(ctx, h.st); err != nil || n != 0 {
		t.Errorf("%d refunds still queued, %v", n, err)
	}
	st, err := mustGate(t, h).State(ctx, []limits.Account{{Name: driver.GateAccount("pn-a")}}, nil)
	if err != nil || st.Accounts[0].Used != 3 {
		t.Errorf("shared count %+v, %v; want 3", st, err)
	}
}

func mustGate(t *testing.T, h sharedHost) limits.Gate {
	t.Helper()
	g, err := h.pool.Gate(driver.DefaultPortfolio)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A claim whose admission was spent but whose transaction never committed
// (a lost reply, a crash before the commit) asks again under the same id:
// a replay that spends nothing twice.
func TestSharedClaimReplaysAnAdmissionItNeverStored(t *testing.T) {
	r := redistest.Start(t)
	ctx := t.Context()
	h := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(0.001, 50, 2)}, 3)[0]
	startDay(t, h, "a")
	cs, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := strings.Cut(cs[0].Shared.ID, ":")
	next := cs[0].Message.ID + 1
	ad, err := mustGate(t, h).Admit(ctx, limits.Request{ClaimID: campaign.SharedClaimID(host, next, 1), Today: campaign.QuotaDay(t0, h.st.Location()),
		Accounts: []limits.Account{{Name: driver.GateAccount("pn-a"), Limit: ratelimit.Limit{Rate: 0.001, Burst: 50}, DailyCap: 2}}})
	if err != nil || !ad.OK {
		t.Fatalf("admit ahead: %+v, %v", ad, err)
	}
	cs, err = New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 2)
	if err != nil || len(cs) != 1 || cs[0].Message.ID != next {
		t.Fatalf("claim = %+v, %v; want row %d alone (its admission replayed, then the cap of 2)", cs, err, next)
	}
	if _, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 1); !waitsFor(err, campaign.WaitCapped) {
		t.Fatalf("third claim: %v, want capped", err)
	}
}

func waitsFor(err error, reason campaign.WaitReason) bool {
	var we *campaign.WaitError
	return errors.As(err, &we) && we.Reason == reason
}

// The recipient rules go through the gate too: a recipient another host
// messaged is put off for the pair gap, a portfolio's reach counts every
// host's recipients, and a recipient stuck to a number this host does not
// have is sent from another and counted as a break.
func TestSharedClaimsApplyTheRecipientRules(t *testing.T) {
	r := redistest.Start(t)
	ctx := t.Context()
	fast := limited(0.001, 50, 100)

	t.Run("pair gap", func(t *testing.T) {
		r.Client(t).FlushAll(ctx)
		hosts := newSharedHosts(t, r, 2, map[string]campaign.Overrides{"a": fast}, 5)
		startDay(t, hosts[0], "a")
		for _, h := range hosts {
			if err := h.st.SetPairGap(ctx, h.camp.ID, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if cs, err := New(hosts[0].st).ClaimN(ctx, hosts[0].camp.ID, "r1", t0, 3); err != nil || len(cs) != 3 {
			t.Fatalf("host 1: %d claims, %v", len(cs), err)
		}
		_, err := New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 3)
		if !waitsFor(err, campaign.WaitRetry) {
			t.Fatalf("host 2: %v, want its rows put off for the pair gap", err)
		}
		// Put off on host 2's clock (the gap measured on Redis's).
		if n := countRows(t, hosts[1].st, `SELECT count(*) FROM messages WHERE state = 'pending' AND next_attempt_at > ?`, t0.UnixNano()); n != 3 {
			t.Errorf("host 2: %d rows put off past now, want the 3 recipients host 1 messaged", n)
		}
	})

	t.Run("reach", func(t *testing.T) {
		r.Client(t).FlushAll(ctx)
		hosts := newSharedHosts(t, r, 2, map[string]campaign.Overrides{"a": fast}, 8)
		for _, h := range hosts {
			if _, err := h.st.AddPortfolio(ctx, campaign.Portfolio{Name: "acme", PinnedLimit: 4}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.st.UpdateAccount(ctx, "a", campaign.AccountChange{Portfolio: ptr("acme")}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := hosts[0].pool.Gate("acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{driver.GateAccount("pn-a")}, Today: campaign.QuotaDay(t0, hosts[0].st.Location()), Force: true}); err != nil {
			t.Fatal(err)
		}
		if cs, err := New(hosts[0].st).ClaimN(ctx, hosts[0].camp.ID, "r1", t0, 3); err != nil || len(cs) != 3 {
			t.Fatalf("host 1: %d claims, %v", len(cs), err)
		}
		// Host 2 has the same recipients: the 3 in the window go free,
		// one more new one fits (4 of 4), the rest wait for the window.
		cs, err := New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 8)
		if err != nil || len(cs) != 4 {
			t.Fatalf("host 2: %d claims, %v; want 4", len(cs), err)
		}
		if _, err := New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 8); !waitsFor(err, campaign.WaitReach) {
			t.Fatalf("host 2 again: %v, want a wait for the reach", err)
		}
		st, err := g.State(ctx, nil, nil)
		if err != nil || st.Reach.Used != 4 {
			t.Errorf("the portfolio's window holds %+v, %v; want 4 recipients", st.Reach, err)
		}
	})

	t.Run("sticky number on another host", func(t *testing.T) {
		r.Client(t).FlushAll(ctx)
		both := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": fast, "b": fast}, 1)[0]
		onlyB := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"b": fast}, 1)[0]
		if err := storetest.Exec(ctx, onlyB.st.Path(), `UPDATE campaigns SET template = 'hello_b'`); err != nil {
			t.Fatal(err)
		}
		startDay(t, both, "a", "b")
		cs, err := New(both.st).ClaimN(ctx, both.camp.ID, "r1", t0, 1)
		if err != nil || cs[0].Account.Name != "a" {
			t.Fatalf("host 1: %+v, %v; want a", cs, err)
		}
		if err := record(ctx, both.st, cs[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
			t.Fatal(err)
		}
		cs, err = New(onlyB.st).ClaimN(ctx, onlyB.camp.ID, "r1", t0, 1)
		if err != nil || cs[0].Account.Name != "b" {
			t.Fatalf("host 2: %+v, %v; want b", cs, err)
		}
		breaks, err := readmodel.New(onlyB.st).StickyBreaks(ctx, onlyB.camp.ID)
		if err != nil || breaks[campaign.StickyElsewhere] != 1 || len(breaks) != 1 {
			t.Errorf("host 2's sticky breaks %v, %v; want one %q", breaks, err, campaign.StickyElsewhere)
		}
	})
}

// A run's last outcomes come after its last claim: GiveBackRefunds hands
// their refunds to Redis at the run's end, once; with Redis down they stay
// queued for the next claim.
func TestGiveBackRefundsAtTheEnd(t *testing.T) {
	r := redistest.StartWith(t, redistest.Options{Persist: true})
	ctx := t.Context()
	h := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(0.001, 50, 10)}, 3)[0]
	startDay(t, h, "a")
	cs, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 3)
	if err != nil || len(cs) != 3 {
		t.Fatalf("claim: %d, %v", len(cs), err)
	}
	used := func() int {
		t.Helper()
		st, err := mustGate(t, h).State(ctx, []limits.Account{{Name: driver.GateAccount("pn-a")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st.Accounts[0].Used
	}
	notSent := campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0, Refund: true}
	if err := record(ctx, h.st, cs[0], "r1", notSent, t0); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	if err := record(ctx, h.st, cs[1], "r1", notSent, t0); err != nil {
		t.Fatal(err)
	}
	if err := New(h.st).GiveBackRefunds(ctx); !errors.Is(err, redisgate.ErrUnavailable) {
		t.Fatalf("give back with Redis down: %v, want it unavailable", err)
	}
	if n, _ := pendingRefunds(ctx, h.st); n != 2 {
		t.Fatalf("%d refunds queued after a failed give-back, want 2", n)
	}
	r.Restart()
	for range 2 { // the second finds nothing left
		if err := New(h.st).GiveBackRefunds(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := pendingRefunds(ctx, h.st); n != 0 || used() != 1 {
		t.Errorf("%d refunds queued, %d counted in Redis; want 0 and the 1 not refunded", n, used())
	}
}

// One message to the same people from two hosts (the same file, no
// --shard): the second host skips whoever the first has in flight or sent,
// with the reason; a message the API refused (refunded) lets go, so the
// skipped row goes again once requeued.
func TestSharedClaimsGuardRepeatsAcrossHosts(t *testing.T) {
	r := redistest.Start(t)
	ctx := t.Context()
	hosts := newSharedHostsOneMessage(t, r, 2, map[string]campaign.Overrides{"a": limited(0.001, 50, 100)}, 5)
	startDay(t, hosts[0], "a")
	first, err := New(hosts[0].st).ClaimN(ctx, hosts[0].camp.ID, "r1", t0, 3)
	if err != nil || len(first) != 3 {
		t.Fatalf("host 1: %d claims, %v", len(first), err)
	}
	if err := record(ctx, hosts[0].st, first[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}
	// A batch of rows host 1 has: skipped, and the rows behind them may go
	// at once (no poll's wait).
	var we *campaign.WaitError
	if _, err := New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 1); !errors.As(err, &we) || we.Reason != campaign.WaitRetry || !we.Until.Equal(t0) {
		t.Fatalf("host 2, a batch of host 1's rows: %v; want a wait for retry until now", err)
	}
	cs, err := New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 5)
	if err != nil || len(cs) != 2 {
		t.Fatalf("host 2: %d claims, %v; want the 2 recipients host 1 has not", len(cs), err)
	}
	skipped := countRows(t, hosts[1].st, `SELECT count(*) FROM messages WHERE state = 'failed' AND error_code = ? AND error_message = ?`,
		campaign.CodeElsewhere, ElsewhereReason)
	if skipped != 3 {
		t.Errorf("host 2 skipped %d rows as sent by another host, want 3", skipped)
	}
	// Host 1's own retry of a row goes: the guard is its own.
	if err := record(ctx, hosts[0].st, first[1], "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0, SpendsRetry: true,
		ErrorCode: 131000, Error: "try again", Class: "transient"}, t0); err != nil {
		t.Fatal(err)
	}
	if again, err := New(hosts[0].st).ClaimN(ctx, hosts[0].camp.ID, "r1", t0, 5); err != nil || len(again) != 1 || again[0].Message.Phone != first[1].Message.Phone {
		t.Fatalf("host 1's retry: %+v, %v; want %s again", again, err, first[1].Message.Phone)
	}
	// The API refuses host 1's third message for good (not accepted):
	// the refund lets the recipient go, and host 2's requeued row is sent.
	if err := record(ctx, hosts[0].st, first[2], "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, Refund: true,
		ErrorCode: 131000, Error: "refused", Class: "permanent"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := New(hosts[0].st).GiveBackRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hosts[1].st.RequeueFailed(ctx, hosts[1].camp.ID, []int{campaign.CodeElsewhere}); err != nil {
		t.Fatal(err)
	}
	cs, err = New(hosts[1].st).ClaimN(ctx, hosts[1].camp.ID, "r1", t0, 5)
	if err != nil || len(cs) != 1 || cs[0].Message.Phone != first[2].Message.Phone {
		t.Fatalf("host 2 after the refund: %+v, %v; want %s alone", cs, err, first[2].Message.Phone)
	}
}

// A host whose clock is an hour ahead of Redis's: the gate decides on
// Redis's clock, and its waits reach the host as waits from the host's
// own now. The engine's loop (claim; on a wait, sleep until it ends) then
// claims once per token over five minutes of the host's clock, not in a
// busy loop of waits that already ended on its clock.
func TestSharedWaitsOnOneClock(t *testing.T) {
	r := redistest.Start(t)
	ctx := t.Context()
	h := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(1.0/60, 1, 100)}, 10)[0]
	now := time.Now().Add(time.Hour) // the host's clock
	g, err := h.pool.Gate(driver.DefaultPortfolio)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: []string{driver.GateAccount("pn-a")}, Today: campaign.QuotaDay(now, h.st.Location()), Force: true}); err != nil {
		t.Fatal(err)
	}
	end := now.Add(5 * time.Minute)
	claims, sent, bad := 0, 0, 0
	for now.Before(end) && claims < 100 {
		cs, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", now, 1)
		claims++
		var we *campaign.WaitError
		switch {
		case err == nil:
			sent += len(cs)
			continue
		case !errors.As(err, &we):
			t.Fatal(err)
		}
		if we.Reason != campaign.WaitTokens {
			t.Fatalf("claim %d: waits for %s, want tokens", claims, we.Reason)
		}
		wait := we.Until.Sub(now)
		if (wait <= 0 || wait > time.Minute) && bad == 0 {
			t.Errorf("claim %d: a wait of %v on the host's clock, want one token's (up to 1m0s)", claims, wait)
			bad++
		}
		now = now.Add(max(wait, 0)) // as dispatch.Engine waits
	}
	if claims > 8 {
		t.Errorf("%d claims in five minutes of the host's clock at one token a minute: a busy loop", claims)
	}
	if sent != 1 {
		t.Errorf("%d sent; Redis's clock allowed the burst of 1", sent)
	}
}

// A claim whose lease runs out before its request started (a crash)
// reached nobody: the rescue puts the row back, and what the gate charged
// for it goes back too — the count against the cap, the recipient's pair
// gap and their place in the reach window — so the row goes again at once
// and a crash does not cut the day's cap short.
func TestSharedLapseGivesTheChargeBack(t *testing.T) {
	r := redistest.Start(t)
	ctx := t.Context()
	h := newSharedHosts(t, r, 1, map[string]campaign.Overrides{"a": limited(1000, 1000, 10)}, 1)[0]
	startDay(t, h, "a")
	if err := h.st.SetPairGap(ctx, h.camp.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	lapsed, err := New(h.st).ClaimN(ctx, h.camp.ID, "r1", t0, 1)
	if err != nil || len(lapsed) != 1 {
		t.Fatalf("claim: %d, %v", len(lapsed), err)
	}
	gateState := func() limits.State {
		t.Helper()
		st, err := mustGate(t, h).State(ctx, []limits.Account{{Name: driver.GateAccount("pn-a")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := gateState(); st.Accounts[0].Used != 1 || st.Reach.Used != 1 {
		t.Fatalf("after the claim: %d counted, %d in the window; want 1 and 1", st.Accounts[0].Used, st.Reach.Used)
	}

	// Runner r1 dies before it starts the request; its lease runs out.
	later := t0.Add(campaign.LeaseTerm)
	if _, err := h.st.Rescue(ctx, h.camp.ID, later, func(campaign.Runner) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if n, err := pendingRefunds(ctx, h.st); err != nil || n != 1 {
		t.Fatalf("%d refunds queued after the lapse (%v), want the lapsed claim's", n, err)
	}
	if err := New(h.st).GiveBackRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	if st := gateState(); st.Accounts[0].Used != 0 || st.Reach.Used != 0 {
		t.Errorf("after the lapse: %d counted, %d in the window; want nothing left of the lapsed claim", st.Accounts[0].Used, st.Reach.Used)
	}
	// The pair gap no longer counts the admission that reached nobody.
	again, err := New(h.st).ClaimN(ctx, h.camp.ID, "r2", later, 1)
	if err != nil || len(again) != 1 || again[0].Message.ID != lapsed[0].Message.ID {
		t.Fatalf("claim after the lapse: %v, %v; want row %d again at once", again, err, lapsed[0].Message.ID)
	}
	if again[0].Shared.ID == lapsed[0].Shared.ID {
		t.Errorf("the claim again has the lapsed claim's id %s", again[0].Shared.ID)
	}
	if st := gateState(); st.Accounts[0].Used != 1 {
		t.Errorf("%d counted after the claim again, want 1", st.Accounts[0].Used)
	}
}
