package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/storetest"
)

func card(t *testing.T, csv string, effective, until string) pricing.Card {
	t.Helper()
	c, err := pricing.ParseCard("card.csv", strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	c.Effective, _ = time.Parse(time.DateOnly, effective)
	if until != "" {
		c.Until, _ = time.Parse(time.DateOnly, until)
	}
	return c
}

const cardCSV = "Market,Currency,Marketing,Utility,Authentication\nGermany,EUR,0.1131,0.0456,0.0636\nOther,EUR,0.05,0.01,0.01\n"

// TestBudgetCommitted: what counts against a budget follows the rows as
// the claim takes them and their outcomes settle.
func TestBudgetCommitted(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	storetest.MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "spring", 5)
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "EUR", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}
	b, err := readmodel.New(st).CampaignBudget(ctx, c.ID)
	if err != nil || b.Max != 1_000_000 || b.Currency != "EUR" || b.Committed != 0 {
		t.Fatalf("budget = %+v, %v", b, err)
	}
	cs, err := claim.New(st).ClaimN(ctx, c.ID, "r", clk.Now(), 3)
	if err != nil || len(cs) != 3 {
		t.Fatalf("claim: %d, %v", len(cs), err)
	}
	if b, _ := readmodel.New(st).CampaignBudget(ctx, c.ID); b.Committed != 3000 {
		t.Errorf("committed with 3 in flight = %v, want 0.003", b.Committed)
	}
	rs := []campaign.Result{
		{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, At: clk.Now()},
		{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, At: clk.Now()},
	}
	if err := st.RecordAll(ctx, "r", rs); err != nil {
		t.Fatal(err)
	}
	if b, _ := readmodel.New(st).CampaignBudget(ctx, c.ID); b.Committed != 2000 {
		t.Errorf("committed after one sent, one failed, one in flight = %v, want 0.002", b.Committed)
	}
	// A second start recounts from the rows: the same figure.
	if err := st.SetBudget(ctx, c.ID, 2_000_000, "EUR", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}
	if b, _ := readmodel.New(st).CampaignBudget(ctx, c.ID); b.Committed != 2000 || b.Max != 2_000_000 {
		t.Errorf("after a raised budget: %+v", b)
	}
}
