package storetest

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
)

func (s suite) pricingTests() []sub {
	return append([]sub{
		{"a rate card kept whole, an overlapping one refused leaving nothing", s.testImportCard},
		{"a WABA's Marketing Messages API status kept per WABA", s.testMarketingStatus},
	}, s.budgetTests()...)
}

const cardCSV = "Market,Currency,Marketing,Utility,Authentication\nGermany,EUR,0.1131,0.0456,0.0636\nOther,EUR,0.05,0.01,0.01\n"

func card(t *testing.T, effective, until string) pricing.Card {
	t.Helper()
	c, err := pricing.ParseCard("card.csv", strings.NewReader(cardCSV))
	if err != nil {
		t.Fatal(err)
	}
	c.Effective, _ = time.Parse(time.DateOnly, effective)
	if until != "" {
		c.Until, _ = time.Parse(time.DateOnly, until)
	}
	return c
}

// testImportCard: a card is stored whole and read back; one whose dates
// overlap a card of its currency is refused and leaves nothing behind.
func (s suite) testImportCard(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	id, err := st.ImportCard(ctx, card(t, "2025-07-01", ""))
	if err != nil {
		t.Fatal(err)
	}
	tiered := card(t, "2026-10-01", "")
	tiered.Tiers = map[string]map[pricing.Category][]pricing.Tier{"Germany": {pricing.Utility: {{From: 1, To: 10, Price: 45600}, {From: 11, Price: 40000}}}}
	if _, err := st.ImportCard(ctx, tiered); err != nil {
		t.Fatal(err)
	}
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil || len(cards) != 2 {
		t.Fatalf("cards = %+v, %v", cards, err)
	}
	if c := cards[0]; c.ID != id || c.Currency != "EUR" || c.Rates["Germany"][pricing.Marketing] != 113100 || c.Rates["Other"][pricing.Utility] != 10000 {
		t.Errorf("card read back = %+v", c)
	}
	if ts := cards[1].Tiers["Germany"][pricing.Utility]; len(ts) != 2 || ts[1].From != 11 || ts[1].Price != 40000 {
		t.Errorf("tiers read back = %+v", ts)
	}
	rates := CountRows(t, st, `SELECT count(*) FROM pricing_rates`)
	for _, c := range []pricing.Card{
		card(t, "2025-07-01", ""),           // the same day
		card(t, "2025-01-01", "2025-08-01"), // ends after the next begins
	} {
		if _, err := st.ImportCard(ctx, c); !errors.Is(err, pricing.ErrCardOverlap) {
			t.Errorf("card from %s: err = %v, want ErrCardOverlap", c.Effective.Format(time.DateOnly), err)
		}
	}
	if n := CountRows(t, st, `SELECT count(*) FROM pricing_cards`); n != 2 {
		t.Errorf("%d cards after the refusals, want 2", n)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM pricing_rates`); n != rates {
		t.Errorf("%d prices after the refusals, want %d", n, rates)
	}
}

// testMarketingStatus: a sync's read replaces that WABA's status only.
func (s suite) testMarketingStatus(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	for _, r := range []struct{ waba, status string }{{"111", "PENDING"}, {"222", "ONBOARDED"}, {"111", "ONBOARDED"}} {
		if err := st.RecordMarketingStatus(ctx, r.waba, r.status, T0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readmodel.New(st).MarketingStatuses(ctx)
	if want := map[string]string{"111": "ONBOARDED", "222": "ONBOARDED"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("statuses = %v, %v; want %v", got, err, want)
	}
}
