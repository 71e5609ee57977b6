package store

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

func mustPortfolio(t *testing.T, st *Store, name string, limit int, margin float64) {
	t.Helper()
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: name, PinnedLimit: limit, Margin: margin}); err != nil {
		t.Fatal(err)
	}
}

func joinPortfolio(t *testing.T, st *Store, account, portfolio string) {
	t.Helper()
	if _, err := st.UpdateAccount(t.Context(), account, campaign.AccountChange{Portfolio: &portfolio}); err != nil {
		t.Fatal(err)
	}
}

// fast are limits under which only the reach holds a claim back.
var fast = limited(1000, 1000, 100000)

// TestThroughputCapsTheRate: whatever the tier says, an account's rate and
// burst stay within its number's throughput: 80/s until read or pinned.
func TestThroughputCapsTheRate(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(500, 300, 100000))
	tests := []struct {
		name      string
		pin       float64
		wantRate  float64
		wantBurst int
		wantTP    float64
	}{
		{"the default 80/s", 0, 80, 80, 80},
		{"pinned higher", 1000, 500, 300, 1000},
		{"pinned lower", 20.5, 20.5, 20, 20.5},
		{"unlimited", campaign.Unlimited, 500, 300, 0},
		{"unpinned again", 0, 80, 80, 80},
	}
	for _, tt := range tests {
		a, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Throughput: ptr(tt.pin)})
		if err != nil {
			t.Fatal(err)
		}
		if a.Limits.Rate != tt.wantRate || a.Limits.Burst != tt.wantBurst || a.Throughput != tt.wantTP {
			t.Errorf("%s: rate %v burst %d throughput %v, want %v, %d, %v", tt.name, a.Limits.Rate, a.Limits.Burst,
				a.Throughput, tt.wantRate, tt.wantBurst, tt.wantTP)
		}
	}
	// A change keeps the tokens (20 after the pin at 20.5); a second
	// later the bucket holds its burst of 80, and gets 80 a second.
	c := mustCampaign(t, st, "c", 500)
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", clk.Now().Add(time.Second), 500)
	if err != nil || len(cs) != 80 {
		t.Fatalf("claimed %d (%v), want 80", len(cs), err)
	}
	cs, err = st.ClaimN(t.Context(), c.ID, "r1", clk.Now().Add(2*time.Second), 500)
	if err != nil || len(cs) != 80 {
		t.Fatalf("a second later claimed %d (%v), want 80", len(cs), err)
	}
}
