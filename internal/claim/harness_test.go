package claim

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The claim's tests run on a real SQLite store on a simulated clock; they
// seed it through storetest's helpers, claim through New as the engine
// does, and read through the store's Reader.

var (
	mustAccount   = storetest.MustAccount
	mustCampaign  = storetest.MustCampaign
	limited       = storetest.Limited
	phone         = storetest.Phone
	accountByName = storetest.AccountByName
	countRows     = storetest.CountRows
)

// fast are limits under which only the reach holds a claim back.
var fast = limited(1000, 1000, 100000)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newFakeClock() *clock.Sim { return clock.NewSim(t0) }

func ptr[T any](v T) *T { return &v }

func openAt(t *testing.T, path string, clk *clock.Sim) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path, store.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openTest(t *testing.T, clk *clock.Sim) *store.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "wasend.db"), clk)
}

func mustPortfolio(t *testing.T, st *store.Store, name string, limit int, margin float64) {
	t.Helper()
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: name, PinnedLimit: limit, Margin: margin}); err != nil {
		t.Fatal(err)
	}
}

func joinPortfolio(t *testing.T, st *store.Store, account, portfolio string) {
	t.Helper()
	if _, err := st.UpdateAccount(t.Context(), account, store.AccountChange{Portfolio: &portfolio}); err != nil {
		t.Fatal(err)
	}
}

// scheduledCampaign imports n rows with a schedule.
func scheduledCampaign(t *testing.T, st *store.Store, name string, n int, sc campaign.Schedule) campaign.Campaign {
	t.Helper()
	c := mustCampaign(t, st, name, n)
	if err := st.SetSchedule(t.Context(), c.ID, sc); err != nil {
		t.Fatal(err)
	}
	c, err := st.Campaign(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// claimOne claims one message (ClaimN of one), as the engine's first claim
// of a run does.
func claimOne(ctx context.Context, st *store.Store, id int64, runner string, now time.Time) (campaign.Claim, error) {
	return storetest.One(New(st).ClaimN(ctx, id, runner, now, 1))
}

func mustClaim(t *testing.T, st *store.Store, id int64, runner string, now time.Time) campaign.Claim {
	t.Helper()
	c, err := claimOne(t.Context(), st, id, runner, now)
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return c
}

// record stores what became of one claimed message (RecordAll of one).
func record(ctx context.Context, st *store.Store, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	return st.RecordAll(ctx, runner, []campaign.Result{{Claim: c, Outcome: o, At: now}})
}

// claimStep is one claim at a named instant: either an account is charged,
// or the claim waits for a reason until an instant (zero: no known instant).
type claimStep struct {
	at          time.Duration
	wantAccount string
	wantWait    campaign.WaitReason
	wantUntil   time.Duration // offset from t0; 0 means the zero time
}

func runClaims(t *testing.T, st *store.Store, clk *clock.Sim, id int64, steps []claimStep) []campaign.Claim {
	t.Helper()
	var claims []campaign.Claim
	for i, s := range steps {
		clk.Set(at(s.at))
		c, err := claimOne(t.Context(), st, id, "r1", at(s.at))
		if s.wantWait != "" {
			var we *campaign.WaitError
			if !errors.As(err, &we) {
				t.Fatalf("step %d (+%v): claim = %s, %v; want wait %s", i, s.at, c.Account.Name, err, s.wantWait)
			}
			want := time.Time{}
			if s.wantUntil != 0 {
				want = at(s.wantUntil)
			}
			if we.Reason != s.wantWait || !we.Until.Equal(want) {
				t.Fatalf("step %d (+%v): wait %s until %v, want %s until %v", i, s.at, we.Reason, we.Until, s.wantWait, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (+%v): %v, want a claim on %s", i, s.at, err, s.wantAccount)
		}
		if c.Account.Name != s.wantAccount {
			t.Fatalf("step %d (+%v): claimed on %s, want %s", i, s.at, c.Account.Name, s.wantAccount)
		}
		if c.Message.State != campaign.Sending || !c.At.Equal(at(s.at)) {
			t.Errorf("step %d: claim %+v", i, c)
		}
		claims = append(claims, c)
	}
	return claims
}

// checkCounts holds the kept counts equal to a recount, and Counts and
// the queue equal to the messages themselves.
func checkCounts(t *testing.T, st *store.Store, step string, ids ...int64) {
	t.Helper()
	if err := st.CheckCounts(t.Context()); err != nil {
		t.Fatalf("after %s: %v", step, err)
	}
	for _, id := range ids {
		got, err := st.Counts(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := campaign.Counts{}
		rows, err := st.Reader().QueryContext(t.Context(), `SELECT state, count(*) FROM messages WHERE campaign_id = ? GROUP BY state`, id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s campaign.State
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			want[s] = n
		}
		rows.Close()
		if !maps.Equal(got, want) {
			t.Fatalf("after %s: campaign %d counts %v, messages say %v", step, id, got, want)
		}
		q, err := readmodel.New(st).CampaignQueue(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		var wq readmodel.Queue
		if err := st.Reader().QueryRowContext(t.Context(), `SELECT
			count(CASE WHEN state = 'pending' AND next_attempt_at <= ?1 THEN 1 END),
			count(CASE WHEN state = 'pending' AND next_attempt_at > ?1 AND window_wait = 0 THEN 1 END),
			count(CASE WHEN state = 'sending' THEN 1 END),
			count(CASE WHEN state = 'pending' AND next_attempt_at > ?1 AND window_wait = 1 THEN 1 END)
			FROM messages WHERE campaign_id = ?2`, st.Now().UnixNano(), id).Scan(&wq.Ready, &wq.Waiting, &wq.InFlight, &wq.WindowWait); err != nil {
			t.Fatal(err)
		}
		if q.Ready != wq.Ready || q.Waiting != wq.Waiting || q.InFlight != wq.InFlight || q.WindowWait != wq.WindowWait {
			t.Fatalf("after %s: campaign %d queue %+v, messages say %+v", step, id, q, wq)
		}
	}
}

// pendingRefunds counts the refunds not yet given back to the shared
// limits.
func pendingRefunds(ctx context.Context, st *store.Store) (int, error) {
	var n int
	err := st.Reader().QueryRowContext(ctx, `SELECT count(*) FROM gate_refunds`).Scan(&n)
	return n, err
}

// sharedQuotaReset resets the shared quota day as `quota reset` does,
// through hostshare.
func sharedQuotaReset(ctx context.Context, st *store.Store, pool *redisgate.Pool, force bool) error {
	_, err := hostshare.NewLimits(pool).ResetQuota(ctx, st, nil, force)
	return err
}

// sharedDayCounts is each account's count of the shared quota day, by
// gate name, as `quota status` reads it.
func sharedDayCounts(ctx context.Context, st *store.Store, pool *redisgate.Pool) (map[string]int, error) {
	states, err := hostshare.NewLimits(pool).State(ctx, st)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range states {
		for i, a := range p.Accounts {
			out[a.Name] = p.State.Accounts[i].Used
		}
	}
	return out, nil
}

func setShare(t *testing.T, st *store.Store, id int64, sh campaign.Share) {
	t.Helper()
	if err := st.SetShare(t.Context(), id, campaign.ShareChange{Priority: &sh.Priority, Weight: &sh.Weight, Borrow: &sh.Borrow}); err != nil {
		t.Fatal(err)
	}
}
