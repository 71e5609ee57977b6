package report

import (
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/pricing"
)

// CampaignCost is a campaign's cost in status --json and show --json, in
// the rate card's currency, as exact decimal strings: the estimate (every
// row that may still cost), the actual cost (the delivered messages, as
// their status webhooks priced them) and the budget (--max-cost) with what
// counts against it. `wasend cost ID` has the lines by market × category.
type CampaignCost struct {
	Currency  string `json:"currency,omitempty"`
	Estimate  string `json:"estimate,omitempty"`
	Actual    string `json:"actual,omitempty"`
	Budget    string `json:"budget,omitempty"`
	Committed string `json:"accepted_or_in_flight,omitempty"` // what counts against the budget
	// NotPriced says why the campaign has no estimate (no card in force,
	// the template's category unknown).
	NotPriced string `json:"not_priced,omitempty"`
}

// NewCampaignCost is c's totals as status and show print them.
func NewCampaignCost(c Costing) *CampaignCost {
	out := &CampaignCost{NotPriced: c.NoEstimate}
	if b := c.Budget; b.Max != 0 {
		out.Budget, out.Committed, out.Currency = b.Max.String(), b.Committed.String(), b.Currency
	}
	if c.NoEstimate == "" {
		out.Currency, out.Estimate, out.Actual = c.Card.Currency, c.Estimate.Total.String(), c.Actual.Total.String()
	}
	return out
}

// Costing is what a campaign's detailed cost is built from: the card and
// category it is priced by on a day, the estimate and the actual cost,
// and its budget. NoEstimate says why there is no estimate (the rest but
// the budget is then zero).
type Costing struct {
	Card       *pricing.Card
	Category   pricing.Category
	At         time.Time // the day its rows are priced at
	Estimate   pricing.Cost
	Actual     pricing.Cost
	Budget     pricing.Budget
	NoEstimate string
}

// CostRow is one market × category of the estimate beside the actual
// cost; either side is nil when it has no line there.
type CostRow struct {
	Market   string
	Category string
	Estimate *pricing.Line
	Actual   *pricing.Line
}

// CostRows lines the estimate up with the actual cost by market ×
// category: the estimate's lines first, in its order, then the actual
// cost's that the estimate lacks.
func CostRows(est, act pricing.Cost) []CostRow {
	rows := map[pricing.Key]*CostRow{}
	var keys []pricing.Key
	at := func(k pricing.Key) *CostRow {
		if rows[k] == nil {
			rows[k] = &CostRow{Market: k.Market, Category: string(k.Category)}
			keys = append(keys, k)
		}
		return rows[k]
	}
	for i, l := range est.Lines {
		at(pricing.Key{Market: l.Market, Category: l.Category}).Estimate = &est.Lines[i]
	}
	for i, l := range act.Lines {
		at(pricing.Key{Market: l.Market, Category: l.Category}).Actual = &act.Lines[i]
	}
	out := make([]CostRow, 0, len(keys))
	for _, k := range keys {
		out = append(out, *rows[k])
	}
	return out
}

// Signed is a count with its sign: +3, 0, -2.
func Signed(n int64) string {
	if n > 0 {
		return "+" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// SignedAmount is an amount with its sign: +1.50, 0.00, -0.25.
func SignedAmount(m pricing.Micros) string {
	if m > 0 {
		return "+" + m.String()
	}
	return m.String()
}

// CostDetail is a campaign's estimate and actual cost in --json: amounts
// are decimal strings in the card's currency, exact.
type CostDetail struct {
	NoEstimate string        `json:"not_priced,omitempty"`
	Currency   string        `json:"currency,omitempty"`
	Card       int64         `json:"card,omitempty"`
	CardFrom   string        `json:"card_effective,omitempty"`
	Category   string        `json:"category,omitempty"`
	PricedOn   string        `json:"priced_on,omitempty"`
	Estimate   *CostLines    `json:"estimate,omitempty"`
	Actual     *CostLines    `json:"actual,omitempty"`
	Budget     *BudgetDetail `json:"budget,omitempty"`
	Tiers      bool          `json:"tiers,omitempty"`      // the card has volume tiers
	Rules      []string      `json:"free_rules,omitempty"` // the free rules in force on the day
}

// CostLines is an estimate or an actual cost in --json.
type CostLines struct {
	Total    string             `json:"total"`
	Lines    []CostLine         `json:"lines"`
	Unpriced []pricing.Unpriced `json:"unpriced"`
}

// CostLine is one market × category of CostLines.
type CostLine struct {
	pricing.Line
	Price string `json:"price"`
	Cost  string `json:"cost"`
}

// BudgetDetail is a campaign's budget in --json.
type BudgetDetail struct {
	Max       string `json:"max"`
	Currency  string `json:"currency"`
	Committed string `json:"accepted_or_in_flight"`
}

func newCostLines(c pricing.Cost) *CostLines {
	out := &CostLines{Total: c.Total.String(), Lines: []CostLine{}, Unpriced: c.Unpriced}
	if out.Unpriced == nil {
		out.Unpriced = []pricing.Unpriced{}
	}
	for _, l := range c.Lines {
		out.Lines = append(out.Lines, CostLine{Line: l, Price: l.Price.String(), Cost: l.Cost.String()})
	}
	return out
}

// NewCostDetail is c in --json.
func NewCostDetail(c Costing) *CostDetail {
	out := &CostDetail{NoEstimate: c.NoEstimate}
	if b := c.Budget; b.Max != 0 {
		out.Budget = &BudgetDetail{Max: b.Max.String(), Currency: b.Currency, Committed: b.Committed.String()}
	}
	if c.NoEstimate != "" {
		return out
	}
	out.Currency, out.Card, out.CardFrom = c.Card.Currency, c.Card.ID, c.Card.Effective.Format(time.DateOnly)
	out.Category, out.PricedOn = string(c.Category), c.At.UTC().Format(time.DateOnly)
	out.Estimate, out.Actual = newCostLines(c.Estimate), newCostLines(c.Actual)
	out.Tiers, out.Rules = len(c.Card.Tiers) > 0, pricing.Rules(c.At)
	return out
}

// ReconLine is one market × category of a reconciliation: what wasend
// counted from the status webhooks beside what pricing_analytics billed.
type ReconLine struct {
	Market         string           `json:"market"`
	Category       pricing.Category `json:"category"`
	Messages, Free int64            `json:"-"`
	Cost           pricing.Micros   `json:"-"`
	MetaMessages   int64            `json:"-"`
	MetaFree       int64            `json:"-"`
	MetaCost       pricing.Micros   `json:"-"`
	CostDiff       pricing.Micros   `json:"-"` // Meta's cost − wasend's
	MessagesDiff   int64            `json:"-"`
}

// Reconciliation compares a campaign's actual cost with what Meta's
// pricing_analytics billed its accounts' WABAs over the days it was
// delivered. Meta's figures cover every message of those WABAs in those
// days, other campaigns' too.
type Reconciliation struct {
	From, To time.Time
	WABAs    []string
	Lines    []ReconLine
}

// CostDiff is Meta's cost − wasend's over every line.
func (r Reconciliation) CostDiff() pricing.Micros {
	var d pricing.Micros
	for _, l := range r.Lines {
		d += l.CostDiff
	}
	return d
}

// ReconDetail is a reconciliation in --json.
type ReconDetail struct {
	From  string            `json:"from"`
	To    string            `json:"to"`
	WABAs []string          `json:"wabas"`
	Lines []ReconLineDetail `json:"lines"`
	Diff  string            `json:"cost_difference"`
}

// ReconLineDetail is one line of ReconDetail.
type ReconLineDetail struct {
	ReconLine
	Messages     int64  `json:"delivered"`
	Free         int64  `json:"free"`
	Cost         string `json:"cost"`
	MetaMessages int64  `json:"meta_volume"`
	MetaFree     int64  `json:"meta_free"`
	MetaCost     string `json:"meta_cost"`
	CostDiff     string `json:"cost_difference"`
}

// NewReconDetail is r in --json; nil for nil.
func NewReconDetail(r *Reconciliation) *ReconDetail {
	if r == nil {
		return nil
	}
	out := &ReconDetail{From: r.From.Format(time.DateOnly), To: r.To.Format(time.DateOnly), WABAs: r.WABAs, Lines: []ReconLineDetail{}}
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, ReconLineDetail{ReconLine: l, Messages: l.Messages, Free: l.Free, Cost: l.Cost.String(),
			MetaMessages: l.MetaMessages, MetaFree: l.MetaFree, MetaCost: l.MetaCost.String(), CostDiff: l.CostDiff.String()})
	}
	out.Diff = r.CostDiff().String()
	return out
}

// RateCard is one imported rate card in `pricing list`.
type RateCard struct {
	ID        int64  `json:"id"`
	Currency  string `json:"currency"`
	Effective string `json:"effective"`
	Until     string `json:"until,omitempty"` // "": until the currency's next card
	Markets   int    `json:"markets"`
	Tiers     bool   `json:"tiers"`
	InForce   bool   `json:"in_force"`
	Source    string `json:"source"`
}

// RateCards lists cards (oldest first, as stored) for `pricing list`,
// each saying whether it is the one of its currency in force at now.
func RateCards(cards []pricing.Card, now time.Time) []RateCard {
	out := []RateCard{}
	for i, c := range cards {
		j := RateCard{ID: c.ID, Currency: c.Currency, Effective: c.Effective.Format(time.DateOnly), Markets: len(c.Rates),
			Tiers: len(c.Tiers) > 0, Source: c.Source}
		if !c.Until.IsZero() {
			j.Until = c.Until.Format(time.DateOnly)
		}
		j.InForce = pricing.InForceOn(cards, c.Currency, now) == &cards[i]
		out = append(out, j)
	}
	return out
}
