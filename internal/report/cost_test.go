package report

import (
	"testing"

	"github.com/wasend/wasend/internal/pricing"
)

func TestCostRowsLinesUpEstimateAndActual(t *testing.T) {
	line := func(m string, c pricing.Category, n int64) pricing.Line {
		return pricing.Line{Market: m, Category: c, Messages: n}
	}
	est := pricing.Cost{Lines: []pricing.Line{line("Germany", pricing.Marketing, 3), line("France", pricing.Marketing, 2)}}
	act := pricing.Cost{Lines: []pricing.Line{line("France", pricing.Marketing, 1), line("France", pricing.Utility, 4)}}
	got := CostRows(est, act)
	want := []struct {
		market, category string
		est, act         int64 // -1: no line on that side
	}{
		{"Germany", "marketing", 3, -1},
		{"France", "marketing", 2, 1},
		{"France", "utility", -1, 4},
	}
	if len(got) != len(want) {
		t.Fatalf("CostRows = %d rows, want %d: %+v", len(got), len(want), got)
	}
	count := func(l *pricing.Line) int64 {
		if l == nil {
			return -1
		}
		return l.Messages
	}
	for i, w := range want {
		g := got[i]
		if g.Market != w.market || g.Category != w.category || count(g.Estimate) != w.est || count(g.Actual) != w.act {
			t.Errorf("row %d = %s %s est %d act %d, want %+v", i, g.Market, g.Category, count(g.Estimate), count(g.Actual), w)
		}
	}
}

func TestReconciliationCostDiffAndSigns(t *testing.T) {
	r := Reconciliation{Lines: []ReconLine{{CostDiff: 1_500_000}, {CostDiff: -250_000}}}
	if d := r.CostDiff(); d != 1_250_000 {
		t.Errorf("CostDiff = %d, want 1250000", d)
	}
	for _, tt := range []struct {
		n    int64
		want string
	}{{3, "+3"}, {0, "0"}, {-2, "-2"}} {
		if got := Signed(tt.n); got != tt.want {
			t.Errorf("Signed(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := SignedAmount(r.CostDiff()); got != "+"+pricing.Micros(1_250_000).String() {
		t.Errorf("SignedAmount = %q", got)
	}
	if got := SignedAmount(-250_000); got != pricing.Micros(-250_000).String() {
		t.Errorf("SignedAmount(-0.25) = %q", got)
	}
}

// The HTML report's cost is show's totals and cost's lines, unpriced rows
// named by side; a campaign that cannot be priced has only the reason.
func TestHTMLCost(t *testing.T) {
	card := &pricing.Card{Currency: "EUR"}
	c := Costing{Card: card, Category: pricing.Marketing,
		Estimate: pricing.Cost{Total: 400_000, Lines: []pricing.Line{{Market: "Germany", Category: pricing.Marketing, Messages: 4, Price: 100_000, Cost: 400_000}},
			Unpriced: []pricing.Unpriced{{Market: "Brazil", Category: pricing.Marketing, Messages: 2, Why: "market not on the card"}}},
		Actual: pricing.Cost{Total: 200_000, Lines: []pricing.Line{{Market: "Germany", Category: pricing.Marketing, Messages: 3, Free: 1, Price: 100_000, Cost: 200_000}}},
		Budget: pricing.Budget{Max: 5_000_000, Currency: "EUR", Committed: 300_000},
	}
	got := htmlCost(c)
	brief := NewCampaignCost(c)
	if got.Currency != brief.Currency || got.Estimate != brief.Estimate || got.Actual != brief.Actual ||
		got.Budget != brief.Budget || got.Committed != brief.Committed || got.Estimate != pricing.Micros(400_000).String() {
		t.Errorf("totals %+v, show's %+v", got, brief)
	}
	if len(got.Lines) != 1 {
		t.Fatalf("%d lines, want 1: %+v", len(got.Lines), got.Lines)
	}
	if l := got.Lines[0]; l.Market != "Germany" || l.Rows != 4 || l.Delivered != 3 || l.Free != 1 ||
		l.Estimate != pricing.Micros(400_000).String() || l.Actual != pricing.Micros(200_000).String() {
		t.Errorf("line %+v", l)
	}
	if len(got.Unpriced) != 1 || got.Unpriced[0] != "estimate: 2 message(s) to Brazil, marketing: market not on the card" {
		t.Errorf("unpriced %q", got.Unpriced)
	}
	none := htmlCost(Costing{NoEstimate: "template x (en): its category is not known"})
	if none.NotPriced == "" || none.Estimate != "" || none.Actual != "" || len(none.Lines) != 0 {
		t.Errorf("not priced: %+v", none)
	}
}
