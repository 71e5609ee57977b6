package pricing

import (
	"cmp"
	"slices"
	"time"
)

// Card is one dated rate card: what each market's template messages cost
// in one currency from Effective (a date, UTC) until Until (zero: until
// the next card of the currency).
type Card struct {
	ID        int64
	Currency  string
	Effective time.Time
	Until     time.Time
	Source    string // the file it was imported from
	Rates     map[string]map[Category]Micros
	// Tiers, where the card has them: a market's category priced by the
	// account's monthly volume in it, lowest volume first.
	Tiers map[string]map[Category][]Tier
}

// Tier is the price of the From-th to the To-th message of a month (To 0:
// no end).
type Tier struct {
	From, To int64
	Price    Micros
}

// InForce says whether the card prices a message sent at t.
func (c *Card) InForce(t time.Time) bool {
	d := day(t)
	return !d.Before(c.Effective) && (c.Until.IsZero() || d.Before(c.Until))
}

func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Market is the card's row for a place: the country's own, else its
// market's, else Other's; ok is false when the card has none of them.
func (c *Card) Market(p Place) (string, bool) {
	for _, m := range []string{p.Country, p.Market, Other} {
		if _, ok := c.Rates[m]; ok {
			return m, true
		}
	}
	return "", false
}

// Price is the list price of a category in a market (the first tier's
// when the card has tiers); ok is false when the card lacks either.
func (c *Card) Price(market string, cat Category) (Micros, bool) {
	if cat == MarketingLite {
		cat = Marketing
	}
	p, ok := c.Rates[market][cat]
	return p, ok
}

// PriceAt is the price of the n-th message (1-based) of a month in a
// market and category: its tier's when the card has tiers for them.
func (c *Card) PriceAt(market string, cat Category, n int64) (Micros, bool) {
	for _, t := range c.Tiers[market][cat] {
		if n >= t.From && (t.To == 0 || n <= t.To) {
			return t.Price, true
		}
	}
	return c.Price(market, cat)
}

// PriceRange is what the from-th to the (from+n-1)-th message of a month
// cost together in a market and category: PriceAt summed, in as many
// steps as the card has tiers (a kept count prices a million messages at
// once). Tiers never overlap (ParseTiers refuses it).
func (c *Card) PriceRange(market string, cat Category, from, n int64) Micros {
	if n <= 0 {
		return 0
	}
	list, _ := c.Price(market, cat)
	var sum Micros
	to, tiered := from+n-1, int64(0)
	for _, t := range c.Tiers[market][cat] {
		lo, hi := max(from, t.From), to
		if t.To != 0 {
			hi = min(hi, t.To)
		}
		if hi >= lo {
			sum += Micros(hi-lo+1) * t.Price
			tiered += hi - lo + 1
		}
	}
	return sum + Micros(n-tiered)*list
}

// Highest is the highest price of a category on the card: what the budget
// counts for a row whose market the card lacks.
func (c *Card) Highest(cat Category) Micros {
	var hi Micros
	for _, r := range c.Rates {
		hi = max(hi, r[cat])
	}
	return hi
}

// InForceOn is the card of the currency (any currency when empty) in force
// at t: the latest effective one, or nil.
func InForceOn(cards []Card, currency string, t time.Time) *Card {
	var best *Card
	for i := range cards {
		c := &cards[i]
		if (currency == "" || c.Currency == currency) && c.InForce(t) && (best == nil || c.Effective.After(best.Effective)) {
			best = c
		}
	}
	return best
}

// Overlap returns the two cards of a currency whose date ranges overlap,
// if any: two from the same day, or a card whose Until passes the next
// card's Effective. A card without Until ends where the next begins.
func Overlap(cards []Card) (a, b *Card, found bool) {
	s := slices.Clone(cards)
	slices.SortFunc(s, func(x, y Card) int {
		return cmp.Or(cmp.Compare(x.Currency, y.Currency), x.Effective.Compare(y.Effective))
	})
	for i := 1; i < len(s); i++ {
		x, y := s[i-1], s[i]
		if x.Currency != y.Currency {
			continue
		}
		if x.Effective.Equal(y.Effective) || (!x.Until.IsZero() && x.Until.After(y.Effective)) {
			return &x, &y, true
		}
	}
	return nil, nil, false
}
