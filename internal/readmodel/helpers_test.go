package readmodel

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store"
)

// The tests build state through the store's public API and read it back
// through a Reader over the same database.

// t0 is 09:00 on the first quota day of every test; instants are offsets.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newFakeClock() *clock.Sim { return clock.NewSim(t0) }

func openTest(t *testing.T, clk *clock.Sim) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "wasend.db"), store.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ptr[T any](v T) *T { return &v }

func mustAccount(t *testing.T, st *store.Store, name, tier string, o campaign.Overrides) campaign.Account {
	t.Helper()
	a, err := st.AddAccount(t.Context(), campaign.Account{
		Name: name, PhoneNumberID: "pn-" + name, Tier: tier, TokenEnv: "WA_TOKEN_" + strings.ToUpper(name), Overrides: o,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// limited returns overrides that pin all three limits.
func limited(rate float64, burst, dailyCap int) campaign.Overrides {
	return campaign.Overrides{Rate: ptr(rate), Burst: ptr(burst), DailyCap: ptr(dailyCap)}
}

func phone(i int) string { return fmt.Sprintf("+4915100%06d", i) }

// mustCampaign imports n distinct recipients (lines 2…n+1) as one campaign.
func mustCampaign(t *testing.T, st *store.Store, name string, n int) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{
		Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		m := campaign.Message{Line: i + 2, Input: phone(i), Phone: phone(i), Params: []string{fmt.Sprint("P", i)}}
		if reason, err := im.Add(t.Context(), m); err != nil || reason != "" {
			t.Fatalf("add line %d: %q, %v", m.Line, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// claimOne is the claim of a batch of one (ClaimN with max 1).
func claimOne(cs []campaign.Claim, err error) (campaign.Claim, error) {
	if err != nil {
		return campaign.Claim{}, err
	}
	return cs[0], nil
}
