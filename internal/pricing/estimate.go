package pricing

import (
	"cmp"
	"slices"
	"time"
)

// Key is a market and category: a line of an estimate or an actual cost.
type Key struct {
	Market   string
	Category Category
}

// Line is one market × category of an estimate or an actual cost.
type Line struct {
	Market   string   `json:"market"`
	Category Category `json:"category"`
	Messages int64    `json:"messages"`
	Free     int64    `json:"free,omitempty"` // messages not charged (actual cost)
	Cost     Micros   `json:"-"`
	// Price is the list price of one message (the first tier's).
	Price Micros `json:"-"`
}

// Unpriced counts rows the card cannot price: its market or category is
// not on the card.
type Unpriced struct {
	Market   string   `json:"market"`
	Category Category `json:"category"`
	Messages int64    `json:"messages"`
	Why      string   `json:"why"`
}

// Cost is an estimate or an actual cost: lines by market × category in
// the card's currency, and what the card could not price.
type Cost struct {
	Card     *Card
	Lines    []Line
	Total    Micros
	Unpriced []Unpriced
}

// Counter adds numbers up by the card's market and a category, for an
// estimate (Count) or an actual cost (Charge).
type Counter struct {
	markets *Markets
	card    *Card
	lines   map[Key]*Line
	unknown map[Key]*Unpriced
}

// NewCounter counts against card (nil: every row is unpriced).
func NewCounter(markets *Markets, card *Card) *Counter {
	return &Counter{markets: markets, card: card, lines: map[Key]*Line{}, unknown: map[Key]*Unpriced{}}
}

// Count adds n rows to phone's market in cat: an estimate. Tiers apply by
// the rows' order within the count, from the first tier (wasend does not
// know the account's volume earlier in the month).
func (c *Counter) Count(phone string, cat Category, n int64) {
	c.add(c.markets.Lookup(phone), cat, n, false)
}

// CountPlace is Count for rows already placed (Markets.Lookup).
func (c *Counter) CountPlace(p Place, cat Category, n int64) { c.add(p, cat, n, false) }

// Charge adds one delivered message as its status webhook priced it:
// free messages count at zero.
func (c *Counter) Charge(phone string, cat Category, free bool) {
	c.ChargeN(phone, cat, 1, free)
}

// ChargeN is Charge for n messages priced alike.
func (c *Counter) ChargeN(phone string, cat Category, n int64, free bool) {
	c.add(c.markets.Lookup(phone), cat, n, free)
}

// SetCard prices what is counted from now on with card: an actual cost
// prices each message by the card in force when it was delivered.
func (c *Counter) SetCard(card *Card) { c.card = card }

func (c *Counter) add(p Place, cat Category, n int64, free bool) {
	if cat == MarketingLite {
		cat = Marketing
	}
	if c.card == nil {
		c.miss(Key{p.Market, cat}, n, "no rate card in force")
		return
	}
	market, ok := c.card.Market(p)
	if !ok {
		c.miss(Key{p.Market, cat}, n, "market not on the card")
		return
	}
	list, ok := c.card.Price(market, cat)
	if !ok {
		c.miss(Key{market, cat}, n, "category not on the card for this market")
		return
	}
	k := Key{market, cat}
	l := c.lines[k]
	if l == nil {
		l = &Line{Market: market, Category: cat, Price: list}
		c.lines[k] = l
	}
	if free {
		l.Messages += n
		l.Free += n
		return
	}
	l.Cost += c.card.PriceRange(market, cat, l.Messages-l.Free+1, n)
	l.Messages += n
}

func (c *Counter) miss(k Key, n int64, why string) {
	u := c.unknown[k]
	if u == nil {
		u = &Unpriced{Market: k.Market, Category: k.Category, Why: why}
		c.unknown[k] = u
	}
	u.Messages += n
}

// Cost is what was counted, lines in market then category order.
func (c *Counter) Cost() Cost {
	out := Cost{Card: c.card}
	for _, l := range c.lines {
		out.Lines = append(out.Lines, *l)
		out.Total += l.Cost
	}
	for _, u := range c.unknown {
		out.Unpriced = append(out.Unpriced, *u)
	}
	slices.SortFunc(out.Lines, func(a, b Line) int {
		return cmp.Or(cmp.Compare(a.Market, b.Market), cmp.Compare(a.Category, b.Category))
	})
	slices.SortFunc(out.Unpriced, func(a, b Unpriced) int {
		return cmp.Or(cmp.Compare(a.Market, b.Market), cmp.Compare(a.Category, b.Category))
	})
	return out
}

// RowPrice is what the budget counts for one row: the list price of its
// market and category, or the category's highest on the card when the
// card lacks its market (a budget is never passed for want of a row).
func RowPrice(markets *Markets, card *Card, phone string, cat Category) Micros {
	if card == nil {
		return 0
	}
	if m, ok := card.Market(markets.Lookup(phone)); ok {
		if p, ok := card.Price(m, cat); ok {
			return p
		}
	}
	return card.Highest(cat)
}

// Rules are the free rules in force on a date, as Meta's pricing page
// states them: what an estimate cannot know per recipient, said beside it.
func Rules(t time.Time) []string {
	rules := []string{
		"non-template messages in a customer service window: free",
		"every message in a free entry point window (72 h after a click-to-WhatsApp ad or Page button): free",
	}
	if day(t).Before(serviceBilled) {
		rules = append(rules, "utility templates in a customer service window: free")
	} else {
		rules = append(rules, "utility templates in a customer service window: billed (from 2026-10-01; not confirmed against Meta's own page)")
	}
	return rules
}

// serviceBilled is when Meta's announced changes bill service and
// in-window utility messages.
var serviceBilled = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// Budget is a campaign's --max-cost and what counts against it: the list
// prices of its rows accepted or in flight.
type Budget struct {
	Max       Micros // 0: none
	Currency  string
	Committed Micros
}
