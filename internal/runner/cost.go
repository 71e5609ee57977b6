package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store/driver"
)

// CampaignCost is a campaign's cost before and after sending: the
// estimate (every row that may still cost, by the card in force on its
// start) and the actual cost (each delivered message as its status
// webhook priced it, by the card in force when it was delivered).
type CampaignCost struct {
	Pricing  Pricing
	Estimate pricing.Cost
	Actual   pricing.Cost
	Budget   pricing.Budget
	// NoEstimate says why there is no estimate or actual cost (no card,
	// the template's category unknown); the rest is then zero.
	NoEstimate string
}

// Costing is c for the report's comparison and its --json.
func (c CampaignCost) Costing() report.Costing {
	return report.Costing{Card: c.Pricing.Card, Category: c.Pricing.Category, At: c.Pricing.At,
		Estimate: c.Estimate, Actual: c.Actual, NoEstimate: c.NoEstimate, Budget: c.Budget}
}

// FileEstimate prices a file being checked or planned: nil when no rate
// card was ever imported (nothing to say), else the estimate or why there
// is none.
func FileEstimate(ctx context.Context, st driver.Driver, sum Summary, spec campaign.Spec, at time.Time) *report.CostDetail {
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil || len(cards) == 0 {
		return nil
	}
	p, err := PricingFor(ctx, st, spec, "", at)
	if err != nil {
		return &report.CostDetail{NoEstimate: err.Error()}
	}
	out := report.NewCostDetail(CampaignCost{Pricing: p, Estimate: EstimatePlaces(p, sum.Places)}.Costing())
	out.Actual = nil
	return out
}

// CostBrief is a campaign's cost for status and show: nil when no rate
// card was ever imported.
func CostBrief(ctx context.Context, st driver.Driver, c campaign.Campaign, now time.Time) (*report.CampaignCost, error) {
	cost, err := PricedCosts(ctx, st, c, now)
	if cost == nil || err != nil {
		return nil, err
	}
	return report.NewCampaignCost(cost.Costing()), nil
}

// PricedCosts is Costs, or nil when no rate card was ever imported
// (nothing to say of a cost).
func PricedCosts(ctx context.Context, st driver.Driver, c campaign.Campaign, now time.Time) (*CampaignCost, error) {
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil || len(cards) == 0 {
		return nil, err
	}
	cost, err := Costs(ctx, st, c, now)
	if err != nil {
		return nil, err
	}
	return &cost, nil
}

// EstimateDate is the day a campaign's rows are priced at: its start,
// its scheduled start, or now.
func EstimateDate(c campaign.Campaign, now time.Time) time.Time {
	switch {
	case !c.BeganAt.IsZero():
		return c.BeganAt
	case !c.Schedule.StartAt.IsZero():
		return c.Schedule.StartAt
	}
	return now
}

// Costs prices a stored campaign. A campaign that cannot be priced is not
// an error: NoEstimate says why.
func Costs(ctx context.Context, st driver.Driver, c campaign.Campaign, now time.Time) (CampaignCost, error) {
	var out CampaignCost
	b, err := readmodel.New(st).CampaignBudget(ctx, c.ID)
	if err != nil {
		return out, err
	}
	out.Budget = b
	p, err := PricingFor(ctx, st, c.Spec, b.Currency, EstimateDate(c, now))
	if err != nil {
		out.NoEstimate = err.Error()
		return out, nil
	}
	out.Pricing = p
	// Both from kept counts by number prefix (readmodel.CostCounts,
	// ChargeCounts): a prefix places a number as the number does.
	counts, err := readmodel.New(st).CostCounts(ctx, c.ID)
	if err != nil {
		return out, err
	}
	est := pricing.NewCounter(p.Markets, p.Card)
	for _, k := range counts {
		est.Count(k.Prefix, p.Category, k.N)
	}
	out.Estimate = est.Cost()
	if out.Actual, err = actual(ctx, st, c.ID, p); err != nil {
		return out, err
	}
	return out, nil
}

func actual(ctx context.Context, st driver.Driver, id int64, p Pricing) (pricing.Cost, error) {
	charges, err := readmodel.New(st).ChargeCounts(ctx, id)
	if err != nil {
		return pricing.Cost{}, err
	}
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil {
		return pricing.Cost{}, err
	}
	// Day by day: a tier counts a month's messages in the order they came.
	act := pricing.NewCounter(p.Markets, p.Card)
	for _, ch := range charges {
		act.SetCard(pricing.InForceOn(cards, p.Card.Currency, ch.Day))
		cat, ok := pricing.ParseCategory(ch.Category)
		if !ok {
			cat = pricing.Category(ch.Category)
		}
		act.ChargeN(ch.Prefix, cat, ch.N, pricing.Free(ch.PricingType, ch.Billable))
	}
	out := act.Cost()
	out.Card = p.Card
	return out, nil
}

// EstimatePlaces is the estimate of rows counted by place (a file being
// checked or planned).
func EstimatePlaces(p Pricing, places map[pricing.Place]int64) pricing.Cost {
	c := pricing.NewCounter(p.Markets, p.Card)
	keys := make([]pricing.Place, 0, len(places))
	for k := range places {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b pricing.Place) int { return cmp.Compare(a.Code, b.Code) })
	for _, k := range keys {
		c.CountPlace(k, p.Category, places[k])
	}
	return c.Cost()
}

// Reconcile reads pricing_analytics for every WABA of the accounts, with
// each one's token, and lines it up with cost.Actual by market × category.
func Reconcile(ctx context.Context, st driver.Driver, api *API, cost CampaignCost, id int64, timeout time.Duration) (report.Reconciliation, error) {
	var r report.Reconciliation
	if cost.Pricing.Card == nil {
		return r, fmt.Errorf("campaign %d cannot be priced: %s", id, cost.NoEstimate)
	}
	charges, err := readmodel.New(st).ChargeCounts(ctx, id)
	if err != nil {
		return r, err
	}
	if len(charges) == 0 {
		return r, fmt.Errorf("campaign %d: no status webhook said a message was delivered yet; nothing to reconcile", id)
	}
	// Oldest day first.
	r.From, r.To = charges[0].Day, charges[len(charges)-1].Day.Add(24*time.Hour)
	reads, err := WABAReads(ctx, st, "", "")
	if err != nil {
		return r, err
	}
	client := api.Client(timeout)
	defer client.CloseIdleConnections()
	lines := map[pricing.Key]*report.ReconLine{}
	line := func(k pricing.Key) *report.ReconLine {
		if lines[k] == nil {
			lines[k] = &report.ReconLine{Market: k.Market, Category: k.Category}
		}
		return lines[k]
	}
	for _, l := range cost.Actual.Lines {
		rl := line(pricing.Key{Market: l.Market, Category: l.Category})
		rl.Messages, rl.Free, rl.Cost = l.Messages, l.Free, l.Cost
	}
	card := cost.Pricing.Card
	for _, rd := range reads {
		token, err := api.Token(rd.TokenEnv)
		if err != nil {
			return r, fmt.Errorf("account %s (WABA %s): %w", rd.Account, rd.WABA, err)
		}
		points, err := client.PricingAnalytics(ctx, rd.WABA, token, r.From, r.To)
		if err != nil {
			return r, fmt.Errorf("pricing_analytics of WABA %s: %w", rd.WABA, err)
		}
		r.WABAs = append(r.WABAs, rd.WABA)
		for _, p := range points {
			place := cost.Pricing.Markets.ByISO(p.Country)
			market, ok := card.Market(place)
			if !ok {
				market = place.Market
			}
			cat, ok := pricing.ParseCategory(p.Category)
			if !ok {
				cat = pricing.Category(strings.ToLower(p.Category))
			}
			rl := line(pricing.Key{Market: market, Category: cat})
			rl.MetaMessages += p.Volume
			if !strings.EqualFold(p.Type, pricing.TypeRegular) {
				rl.MetaFree += p.Volume
			}
			m, _ := pricing.ParseMicros(fmt.Sprintf("%.6f", p.Cost))
			rl.MetaCost += m
		}
	}
	for _, l := range lines {
		l.CostDiff, l.MessagesDiff = l.MetaCost-l.Cost, l.MetaMessages-l.Messages
		r.Lines = append(r.Lines, *l)
	}
	slices.SortFunc(r.Lines, func(a, b report.ReconLine) int {
		return cmp.Or(cmp.Compare(a.Market, b.Market), cmp.Compare(a.Category, b.Category))
	})
	return r, nil
}

// RowCharge is what one delivered message cost, for export: the category
// and type its status webhooks gave, and its cost by the card in force the
// day it was delivered (list price; free types 0). Priced is false when
// no card prices it.
type RowCharge struct {
	Category, Type string
	Cost           pricing.Micros
	Priced         bool
}

// RowCharges are a campaign's delivered messages by phone; nil when no
// rate card was ever imported.
func RowCharges(ctx context.Context, st driver.Driver, c campaign.Campaign, now time.Time) (map[string]RowCharge, error) {
	cards, err := readmodel.New(st).Cards(ctx)
	if err != nil || len(cards) == 0 {
		return nil, err
	}
	b, err := readmodel.New(st).CampaignBudget(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	currency := b.Currency
	if p, err := PricingFor(ctx, st, c.Spec, currency, EstimateDate(c, now)); err == nil {
		currency = p.Card.Currency
	}
	charges, err := readmodel.New(st).Charges(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	markets := pricing.DefaultMarkets()
	out := make(map[string]RowCharge, len(charges))
	for _, ch := range charges {
		rc := RowCharge{Category: ch.Category, Type: ch.PricingType}
		cat, ok := pricing.ParseCategory(ch.Category)
		card := pricing.InForceOn(cards, currency, ch.At)
		switch {
		case pricing.Free(ch.PricingType, ch.Billable):
			rc.Priced = true
		case ok && card != nil:
			if m, found := card.Market(markets.Lookup(ch.Phone)); found {
				rc.Cost, rc.Priced = card.Price(m, cat)
			}
		}
		out[ch.Phone] = rc
	}
	return out, nil
}
