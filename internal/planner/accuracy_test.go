package planner_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// TestForecastMatchesEngine plans a campaign from the store's accounts,
// then sends it with the real engine — store, sandbox over HTTP, quota
// resets at each midnight — on a simulated clock, and compares the
// finishing times measured from the start.
func TestForecastMatchesEngine(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		global *ratelimit.Limit
		reach  int // a portfolio of the three with this messaging limit
	}{
		{name: "three tiers over three quota days", n: 1000},
		// 1/4 s against 0.41/s of the accounts together.
		{name: "global bucket binds", n: 400, global: &ratelimit.Limit{Rate: 0.25, Burst: 5}},
		// 250 distinct recipients a 24 h window against 500 of daily caps.
		{name: "messaging limit binds", n: 700, reach: 250},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2026, 3, 2, 23, 50, 0, 0, time.UTC)
			clk := clock.NewSim(start)
			st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: clk.Now, Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			box := sandbox.New(sandbox.Options{Now: clk.Now})
			srv := httptest.NewServer(box)
			defer srv.Close()
			client := whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})
			defer client.CloseIdleConnections()

			for i, tier := range campaign.TierNames {
				a := campaign.Account{Name: tier, PhoneNumberID: fmt.Sprint(1001 + i), Tier: tier, TokenEnv: "T"}
				if _, err := st.AddAccount(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
			if tt.reach > 0 {
				if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: "acme", PinnedLimit: tt.reach}); err != nil {
					t.Fatal(err)
				}
				for _, tier := range campaign.TierNames {
					acme := "acme"
					if _, err := st.UpdateAccount(ctx, tier, campaign.AccountChange{Portfolio: &acme}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.global != nil {
				if err := st.SetGlobalLimit(ctx, true, *tt.global); err != nil {
					t.Fatal(err)
				}
			}
			c := importN(t, ctx, st, tt.n)

			accts, err := st.Accounts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			gl, tokens, on, err := readmodel.New(st).GlobalLimit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var global *ratelimit.Bucket
			if on {
				global = &ratelimit.Bucket{Tokens: tokens, At: clk.Now()}
			}
			ws, err := readmodel.New(st).PortfolioWindows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ports []planner.PortfolioState
			for _, w := range ws {
				ports = append(ports, planner.PortfolioState{Name: w.Name, Reach: w.Reach, Accounts: w.Accounts, Latest: w.Latest})
			}
			plan, err := planner.ETA(clk.Now(), time.UTC, planner.Open{Messages: tt.n}, planner.Limits{Accounts: accts, Global: global, GlobalLimit: gl, Portfolios: ports})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Capped {
				t.Fatalf("forecast: never (%s)", plan.Reason)
			}

			resets := 0
			clk.OnAdvance = func(from, to time.Time) {
				if from.Truncate(24*time.Hour) != to.Truncate(24*time.Hour) {
					resets++
					if _, err := st.ResetQuota(ctx, nil, false); err != nil {
						t.Error(err)
					}
				}
			}
			eng, err := dispatch.New(dispatch.Options{
				Campaign: c, Ledger: claim.New(st), Sender: client, Clock: clk,
				Token:  func(string) (string, error) { return "test-token", nil },
				Runner: campaign.Runner{ID: "sim", Host: "test", PID: 1}, Policy: dispatch.Policy{Workers: 4}, Poll: time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Run(ctx); err != nil {
				t.Fatal(err)
			}
			took := clk.Now().Sub(start)
			counts, err := st.Counts(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if counts[campaign.Sent] != tt.n {
				t.Fatalf("engine sent %v, want %d", counts, tt.n)
			}

			off := float64(plan.Duration-took) / float64(took)
			t.Logf("forecast %v (%d resets), engine %v (%d resets): off by %+.3f %%; shares %+v",
				plan.Duration, plan.QuotaResets, took, resets, off*100, plan.PerAccount)
			if off < -0.02 || off > 0.02 {
				t.Errorf("forecast %v, engine took %v: off by %.2f %% (> 2 %%)", plan.Duration, took, off*100)
			}
			if plan.QuotaResets != resets {
				t.Errorf("forecast %d quota resets, engine saw %d", plan.QuotaResets, resets)
			}
		})
	}
}

func importN(t *testing.T, ctx context.Context, st *store.Store, n int) campaign.Campaign {
	t.Helper()
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "+49151%08d,Person %d\n", 10000000+i, i)
	}
	c, skipped, err := runner.Import(ctx, st, strings.NewReader(b.String()), "sim.csv", campaign.Campaign{
		Name: "sim", Fingerprint: fmt.Sprint("sim-", n), Source: "sim.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: sandbox.DemoTemplate, Lang: "en_US", Params: []string{"name"}},
	}, "")
	if err != nil || len(skipped) != 0 || c.Imported != n {
		t.Fatalf("import: %v, skipped %v, imported %d", err, skipped, c.Imported)
	}
	return c
}
