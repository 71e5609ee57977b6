package readmodel_test

import (
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestPortfolioWindows: every portfolio with a limit, with the latest send
// to each recipient still in its 24 h window, oldest first; a removed
// account's sends still count; a portfolio without accounts has an empty
// window, an account without a limit none at all.
func TestPortfolioWindows(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newFakeClock()
		st := b.open(t, clk)
		ctx := t.Context()
		for _, p := range []campaign.Portfolio{{Name: "acme", PinnedLimit: 10, Margin: 0.1}, {Name: "idle", PinnedLimit: 5}} {
			if _, err := st.AddPortfolio(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		acme := "acme"
		for _, name := range []string{"a", "b"} {
			storetest.MustAccount(t, st, name, campaign.TierNew, storetest.Limited(1000, 1000, 100000))
			if _, err := st.UpdateAccount(ctx, name, campaign.AccountChange{Portfolio: &acme}); err != nil {
				t.Fatal(err)
			}
		}
		storetest.MustAccount(t, st, "solo", campaign.TierNew, campaign.Overrides{})
		c := storetest.MustCampaign(t, st, "reach", 3)
		var senders []string
		for i := range 3 {
			cl, err := storetest.One(claim.New(st).ClaimN(ctx, c.ID, "r1", at(time.Duration(i)*time.Hour), 1))
			if err != nil {
				t.Fatalf("claim at +%dh: %v", i, err)
			}
			senders = append(senders, cl.Account.Name)
		}
		// The number that sent at +1h goes; its sends stay in the window.
		if err := st.RemoveAccount(ctx, senders[1]); err != nil {
			t.Fatal(err)
		}
		kept := "a"
		if senders[1] == "a" {
			kept = "b"
		}

		clk.Set(at(24*time.Hour + 30*time.Minute)) // the send at t0 has left the window
		ws, err := readmodel.New(st).PortfolioWindows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []readmodel.PortfolioWindow{
			{Name: "acme", Reach: ratelimit.Reach{Limit: 10, Margin: 0.1}, Accounts: []string{kept}, Latest: []time.Time{at(time.Hour), at(2 * time.Hour)}},
			{Name: "idle", Reach: ratelimit.Reach{Limit: 5}},
		}
		if len(ws) != len(want) {
			t.Fatalf("windows %+v, want %+v", ws, want)
		}
		for i, w := range ws {
			if w.Name != want[i].Name || w.Reach != want[i].Reach || !slices.Equal(w.Accounts, want[i].Accounts) ||
				!slices.EqualFunc(w.Latest, want[i].Latest, time.Time.Equal) {
				t.Errorf("window %d = %+v, want %+v", i, w, want[i])
			}
		}
	})
}
