package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// TierHistory lists an account's tier changes, oldest first.
func (r *Reader) TierHistory(ctx context.Context, name string) ([]campaign.TierChange, error) {
	var id int64
	err := r.db.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ? AND removed_at IS NULL`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read account %s: %w", name, err)
	}
	rows, err := r.db.QueryContext(ctx, `SELECT at, from_tier, to_tier, reason FROM tier_changes WHERE account_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read tier history of %s: %w", name, err)
	}
	defer rows.Close()
	var out []campaign.TierChange
	for rows.Next() {
		c := campaign.TierChange{Account: name}
		var at int64
		if err := rows.Scan(&at, &c.From, &c.To, &c.Reason); err != nil {
			return nil, err
		}
		c.At = fromNanos(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Tiers returns every tier with its current and built-in limits, in
// campaign.TierNames' order.
func (r *Reader) Tiers(ctx context.Context) ([]campaign.Tier, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT name, rate, burst, daily_cap FROM tiers`)
	if err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	defer rows.Close()
	byName := map[string]campaign.Tier{}
	for rows.Next() {
		var t campaign.Tier
		if err := rows.Scan(&t.Name, &t.Limits.Rate, &t.Limits.Burst, &t.Limits.DailyCap); err != nil {
			return nil, fmt.Errorf("list tiers: %w", err)
		}
		t.Defaults = campaign.DefaultTiers[t.Name]
		byName[t.Name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tiers: %w", err)
	}
	out := make([]campaign.Tier, 0, len(byName))
	for _, name := range campaign.TierNames {
		if t, ok := byName[name]; ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// GlobalLimit returns the global bucket's settings and its tokens at the
// store's clock; ok is false when it is off.
func (r *Reader) GlobalLimit(ctx context.Context) (l ratelimit.Limit, tokens float64, ok bool, err error) {
	var (
		b       ratelimit.Bucket
		at      int64
		enabled int64
	)
	err = r.db.QueryRowContext(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`).
		Scan(&enabled, &l.Rate, &l.Burst, &b.Tokens, &at)
	if err != nil {
		return l, 0, false, fmt.Errorf("read global limit: %w", err)
	}
	b.At = fromNanos(at)
	return l, b.TokensAt(l, r.now()), enabled != 0, nil
}

// TierProgress is each auto-tier account's way to its next tier at the
// store's clock, by name: the record the quota reset's promotion reads
// (tierrecord), judged as it judges it.
func (r *Reader) TierProgress(ctx context.Context) (map[string]campaign.TierProgress, error) {
	accts, err := tierrecord.Accounts(ctx, r.db, ``)
	if err != nil {
		return nil, err
	}
	now, loc := r.now(), r.src.Location()
	out := map[string]campaign.TierProgress{}
	for _, a := range accts {
		days, err := tierrecord.Days(ctx, r.db, a.ID, a.Since, loc)
		if err != nil {
			return nil, err
		}
		out[a.Name] = campaign.AssessTier(a.Tier, a.Since, now, a.PromoteAfter, a.DailyCap, days, a.Quality)
	}
	return out, nil
}
