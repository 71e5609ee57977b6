package claim

import (
	"context"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redisgate"
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
	checkCounts   = storetest.HoldCounts
)

// fast are limits under which only the reach holds a claim back.
var fast = limited(1000, 1000, 100000)

func at(d time.Duration) time.Time { return t0.Add(d) }

var (
	newFakeClock = storetest.NewClock
	openAt       = storetest.OpenSQLite
	openTest     = storetest.OpenTest
)

func ptr[T any](v T) *T { return &v }

func mustPortfolio(t *testing.T, st *store.Store, name string, limit int, margin float64) {
	t.Helper()
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: name, PinnedLimit: limit, Margin: margin}); err != nil {
		t.Fatal(err)
	}
}

func joinPortfolio(t *testing.T, st *store.Store, account, portfolio string) {
	t.Helper()
	if _, err := st.UpdateAccount(t.Context(), account, campaign.AccountChange{Portfolio: &portfolio}); err != nil {
		t.Fatal(err)
	}
}

// portfolioOfTwo makes portfolio "acme" reaching limit recipients a day,
// shared by two fast new numbers "a" and "b".
func portfolioOfTwo(t *testing.T, st *store.Store, limit int) {
	t.Helper()
	mustPortfolio(t, st, "acme", limit, 0)
	for _, name := range []string{"a", "b"} {
		mustAccount(t, st, name, campaign.TierNew, fast)
		joinPortfolio(t, st, name, "acme")
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

// claimStep is one claim at a named instant (storetest.ClaimStep).
type claimStep = storetest.ClaimStep

// runClaims claims one row at each step's instant as the engine's first
// claim of a run does (claimOne), by runner r1.
func runClaims(t *testing.T, st *store.Store, clk *clock.Sim, id int64, steps []claimStep) []campaign.Claim {
	t.Helper()
	return storetest.RunClaims(t, st, clk, func(now time.Time) (campaign.Claim, error) {
		return claimOne(t.Context(), st, id, "r1", now)
	}, steps)
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
