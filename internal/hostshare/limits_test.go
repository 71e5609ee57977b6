package hostshare

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// twoPortfolios is one host whose account a sends from portfolio "p1" and
// b from "p2", both started in Redis by a forced reset; lose removes a
// portfolio's state as a Redis restarted without persistence does.
func twoPortfolios(t *testing.T, r *redistest.Server, clk *clock.Sim) (*store.Store, *Limits, func(p string)) {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pool, err := redisgate.Dial(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	lim := NewLimits(pool)
	t.Cleanup(func() { lim.Close() })
	for _, p := range []string{"p1", "p2"} {
		if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	rate, burst, limit := 0.001, 50, 100
	for _, ap := range [][2]string{{"a", "p1"}, {"b", "p2"}} {
		name, p := ap[0], ap[1]
		if _, err := st.AddAccount(ctx, campaign.Account{Name: name, PhoneNumberID: "pn-" + name, Tier: campaign.TierNew,
			TokenEnv: "WA_TOKEN_" + strings.ToUpper(name), Overrides: campaign.Overrides{Rate: &rate, Burst: &burst, DailyCap: &limit}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateAccount(ctx, name, campaign.AccountChange{Portfolio: &p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lim.ResetQuota(ctx, st, nil, true); err != nil {
		t.Fatal(err)
	}
	lose := func(p string) {
		if err := r.Client(t).Del(ctx, "wasend:{p:"+p+"}:gen").Err(); err != nil {
			t.Fatal(err)
		}
	}
	return st, lim, lose
}

// A plain (cron) quota reset starts the new day in every portfolio it can
// and names the lost ones after; run again it changes nothing.
func TestResetQuotaGoesOnPastALostPortfolio(t *testing.T) {
	r := redistest.Start(t)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clk := clock.NewSim(t0)
	st, lim, lose := twoPortfolios(t, r, clk)
	lose("p1")
	clk.Set(t0.Add(24 * time.Hour)) // the cron line at the next midnight
	tomorrow := campaign.QuotaDay(clk.Now(), st.Location())
	for run := range 2 {
		res, err := lim.ResetQuota(t.Context(), st, nil, false)
		var rerr *ResetError
		if !errors.As(err, &rerr) || len(rerr.Failed) != 1 || rerr.Failed[0].Portfolio != "p1" ||
			!slices.Equal(rerr.Failed[0].Accounts, []string{"a"}) || !errors.Is(err, ErrStateLost) {
			t.Fatalf("run %d: error %v, want p1 (a) lost", run, err)
		}
		if len(res) != 1 || res[0].Account != "b" || res[0].Day != tomorrow+"#2" || res[0].Reset.Reset != (run == 0) {
			t.Fatalf("run %d: reset %+v, want b on %s#2 (reset on the first run only)", run, res, tomorrow)
		}
	}
}
