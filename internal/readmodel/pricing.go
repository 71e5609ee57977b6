package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
)

// Cards are the rate cards stored, each with its prices, oldest first.
func (r *Reader) Cards(ctx context.Context) ([]pricing.Card, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT id, currency, effective, until, source FROM pricing_cards ORDER BY effective, `+r.db.d.bytewise("currency"))
	if err != nil {
		return nil, fmt.Errorf("read rate cards: %w", err)
	}
	var cards []pricing.Card
	byID := map[int64]int{}
	for rows.Next() {
		var (
			c         pricing.Card
			eff, unto string
		)
		if err := rows.Scan(&c.ID, &c.Currency, &eff, &unto, &c.Source); err != nil {
			rows.Close()
			return nil, err
		}
		c.Effective, c.Until = pricing.ParseDay(eff), pricing.ParseDay(unto)
		c.Rates = map[string]map[pricing.Category]pricing.Micros{}
		byID[c.ID] = len(cards)
		cards = append(cards, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = r.db.QueryContext(ctx, `SELECT card_id, market, category, tier_from, tier_to, price
		FROM pricing_rates ORDER BY card_id, `+r.db.d.bytewise("market")+`, `+r.db.d.bytewise("category")+`, tier_from`)
	if err != nil {
		return nil, fmt.Errorf("read rate cards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, from, to, price int64
			market, cat         string
		)
		if err := rows.Scan(&id, &market, &cat, &from, &to, &price); err != nil {
			return nil, err
		}
		i, ok := byID[id]
		if !ok {
			continue
		}
		c := &cards[i]
		k := pricing.Category(cat)
		if from == 0 {
			if c.Rates[market] == nil {
				c.Rates[market] = map[pricing.Category]pricing.Micros{}
			}
			c.Rates[market][k] = pricing.Micros(price)
			continue
		}
		if c.Tiers == nil {
			c.Tiers = map[string]map[pricing.Category][]pricing.Tier{}
		}
		if c.Tiers[market] == nil {
			c.Tiers[market] = map[pricing.Category][]pricing.Tier{}
		}
		c.Tiers[market][k] = append(c.Tiers[market][k], pricing.Tier{From: from, To: to, Price: pricing.Micros(price)})
	}
	return cards, rows.Err()
}

// CampaignBudget is a campaign's budget as stored (Max 0: none).
func (r *Reader) CampaignBudget(ctx context.Context, id int64) (pricing.Budget, error) {
	var b pricing.Budget
	var max, committed int64
	err := r.db.QueryRowContext(ctx, `SELECT c.max_cost, c.max_cost_currency, coalesce(s.committed, 0)
		FROM campaigns c LEFT JOIN campaign_spend s ON s.campaign_id = c.id WHERE c.id = ?`, id).Scan(&max, &b.Currency, &committed)
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	b.Max, b.Committed = pricing.Micros(max), pricing.Micros(committed)
	return b, err
}

// Charged is one message a status webhook said was delivered, with the
// pricing it gave: what an actual cost is made of.
type Charged struct {
	Phone       string
	Category    string
	PricingType string
	Billable    *bool
	At          time.Time
}

// receivedIn is the condition that the status column col is a rung of
// the delivery ladder that says the message arrived (delivered, read).
func receivedIn(col string) string {
	var in []string
	for _, r := range campaign.DeliveryLadder {
		if r.Received {
			in = append(in, "'"+strings.ReplaceAll(string(r.Delivery), "'", "''")+"'")
		}
	}
	return "coalesce(" + col + ", '') IN (" + strings.Join(in, ", ") + ")"
}

// Charges are a campaign's delivered messages (a delivered or read
// status came) with the pricing their statuses gave (Meta puts it on sent
// and delivered; a read may come alone), one per message, at its first
// delivered or read status.
func (r *Reader) Charges(ctx context.Context, campaignID int64) ([]Charged, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT m.id, m.phone, coalesce(p.pricing, ''), coalesce(p.pricing_type, ''), p.billable, d.at
		FROM messages m
		JOIN (SELECT message_id, min(at) AS at FROM message_statuses WHERE `+receivedIn("status")+` GROUP BY message_id) d
			ON d.message_id = m.id
		LEFT JOIN message_statuses p ON p.message_id = m.id AND p.pricing <> ''
		WHERE m.campaign_id = ?
		ORDER BY m.id, p.at DESC`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("read campaign %d's charges: %w", campaignID, err)
	}
	defer rows.Close()
	var (
		out  []Charged
		last int64
	)
	for rows.Next() {
		var (
			c        Charged
			id, at   int64
			billable sql.NullInt64
		)
		if err := rows.Scan(&id, &c.Phone, &c.Category, &c.PricingType, &billable, &at); err != nil {
			return nil, err
		}
		if id == last {
			continue // the latest status with pricing is the one kept
		}
		last = id
		if billable.Valid {
			b := billable.Int64 != 0
			c.Billable = &b
		}
		c.At = time.Unix(0, at)
		out = append(out, c)
	}
	return out, rows.Err()
}
