package claim

import (
	"errors"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestBudget: a claim admits rows while accepted + in flight + the row's
// price stay within --max-cost, in queue order; then it says ErrBudget,
// also to another runner; an outcome that fails a row gives its price
// back; a raised budget admits the rest.
func TestBudget(t *testing.T) {
	now := t0
	st := openStore(t, &now)
	ctx := t.Context()
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "budget", 6)
	price := func(string) pricing.Micros { return 25_000 }
	if err := st.SetBudget(ctx, c.ID, 60_000, "USD", price); err != nil {
		t.Fatal(err)
	}
	l := New(st)
	cs, err := l.ClaimN(ctx, c.ID, "r1", now, 6)
	if err != nil || len(cs) != 2 {
		t.Fatalf("first claim: %d rows, %v; want 2 (2 × 0.025 ≤ 0.06 < 3 × 0.025)", len(cs), err)
	}
	for _, r := range []string{"r1", "r2"} {
		if _, err := l.ClaimN(ctx, c.ID, r, now, 6); !errors.Is(err, campaign.ErrBudget) {
			t.Fatalf("%s's claim with 0.05 in flight: %v, want ErrBudget", r, err)
		}
	}
	// One accepted, one refused for good: 0.025 counts, a row fits again.
	if err := st.RecordAll(ctx, "r1", []campaign.Result{
		{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, At: now},
		{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, At: now},
	}); err != nil {
		t.Fatal(err)
	}
	if cs, err = l.ClaimN(ctx, c.ID, "r1", now, 6); err != nil || len(cs) != 1 {
		t.Fatalf("after a failure: %d rows, %v; want 1", len(cs), err)
	}
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "USD", price); err != nil {
		t.Fatal(err)
	}
	if cs, err = l.ClaimN(ctx, c.ID, "r1", now, 6); err != nil || len(cs) != 3 {
		t.Fatalf("raised budget: %d rows, %v; want the 3 left", len(cs), err)
	}
	b, _ := readmodel.New(st).CampaignBudget(ctx, c.ID)
	if b.Committed != 5*25_000 {
		t.Errorf("committed = %v, want 0.125 (5 rows accepted or in flight)", b.Committed)
	}
}
