package readmodel

import (
	"context"
	"fmt"
	"time"
)

// PrefixCount is how many of a campaign's rows have numbers beginning
// with Prefix (pricing.NumberPrefix: enough to place a number).
type PrefixCount struct {
	Prefix string
	N      int64
}

// CostCounts are a campaign's rows that may still cost (every state but
// failed and expired) by number prefix, as the store keeps them (migration
// 0050): an estimate reads a few rows, not the campaign's.
func (r *Reader) CostCounts(ctx context.Context, campaignID int64) ([]PrefixCount, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT prefix, n FROM cost_counts WHERE campaign_id = ? AND n <> 0 ORDER BY `+r.db.d.bytewise("prefix"), campaignID)
	if err != nil {
		return nil, fmt.Errorf("read campaign %d's rows by market: %w", campaignID, err)
	}
	defer rows.Close()
	var out []PrefixCount
	for rows.Next() {
		var c PrefixCount
		if err := rows.Scan(&c.Prefix, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChargeCount is how many of a campaign's delivered messages share a
// number prefix, the day their first delivered or read status came (the
// card in force that day prices them) and the pricing their latest status
// with one gave (as Charged has it).
type ChargeCount struct {
	Prefix      string
	Day         time.Time
	Category    string
	PricingType string
	Billable    *bool
	N           int64
}

// ChargeCounts are a campaign's delivered messages counted as the store
// keeps them (migration 0050), oldest day first: an actual cost reads a
// few rows, not every message and its statuses.
func (r *Reader) ChargeCounts(ctx context.Context, campaignID int64) ([]ChargeCount, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT prefix, day, category, pricing_type, billable, n FROM charge_counts
		WHERE campaign_id = ? AND n <> 0 ORDER BY day, `+r.db.d.bytewise("prefix")+`, `+r.db.d.bytewise("category")+`, `+
		r.db.d.bytewise("pricing_type")+`, billable`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("read campaign %d's charges: %w", campaignID, err)
	}
	defer rows.Close()
	var out []ChargeCount
	for rows.Next() {
		var (
			c             ChargeCount
			day, billable int64
		)
		if err := rows.Scan(&c.Prefix, &day, &c.Category, &c.PricingType, &billable, &c.N); err != nil {
			return nil, err
		}
		c.Day = time.Unix(day*86400, 0).UTC()
		if billable >= 0 {
			b := billable != 0
			c.Billable = &b
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
