package hostshare

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// TestSharedAccounts: the gate knows a number by its phone-number id, at
// its limits; an account in a portfolio offers the portfolio's reach (the
// lower of its pinned and read limits, with its margin), one without counts
// in the default portfolio with no reach of its own here.
func TestSharedAccounts(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewSim(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.AddPortfolio(ctx, campaign.Portfolio{Name: "acme", PinnedLimit: 1000, Margin: 0.1}); err != nil {
		t.Fatal(err)
	}
	rate, burst, cap := 2.0, 4, 30
	for _, name := range []string{"a", "b"} {
		if _, err := st.AddAccount(ctx, campaign.Account{Name: name, PhoneNumberID: "pn-" + name, Tier: campaign.TierNew,
			TokenEnv: "WA_TOKEN", Overrides: campaign.Overrides{Rate: &rate, Burst: &burst, DailyCap: &cap}}); err != nil {
			t.Fatal(err)
		}
	}
	acme := "acme"
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Portfolio: &acme}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordSync(ctx, "a", campaign.NumberInfo{MessagingLimit: 250}); err != nil {
		t.Fatal(err)
	}
	gate := func(name string) limits.Account {
		return limits.Account{Name: "pn-" + name, Limit: ratelimit.Limit{Rate: 2, Burst: 4}, DailyCap: 30}
	}
	a := SharedAccount{Name: "a", Portfolio: "acme", Reach: ratelimit.Reach{Limit: 250, Margin: 0.1}, Gate: gate("a")}
	b := SharedAccount{Name: "b", Portfolio: driver.DefaultPortfolio, Gate: gate("b")}
	for _, tt := range []struct {
		names []string
		want  []SharedAccount
	}{
		{nil, []SharedAccount{a, b}},
		{[]string{"b"}, []SharedAccount{b}},
	} {
		got, err := SharedAccounts(ctx, st, tt.names)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SharedAccounts(%q) = %+v, %v\nwant %+v", tt.names, got, err, tt.want)
		}
	}
	if _, err := SharedAccounts(ctx, st, []string{"b", "zz"}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("SharedAccounts with an unknown name: %v, want ErrNotFound", err)
	}
}
