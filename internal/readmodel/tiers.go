package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
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

// TierProgress is each auto-tier account's way to its next tier, by name,
// with its requests counted by quota day in loc (the store's Location).
// The store judges promotions from the same rows (campaign.AssessTier).
func (r *Reader) TierProgress(ctx context.Context, loc *time.Location) (map[string]campaign.TierProgress, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT a.id, a.name, a.tier, a.tier_since, a.promote_after, t.daily_cap, a.quality_rating
		FROM accounts a JOIN tiers t ON t.name = a.tier
		WHERE a.auto_tier = 1 AND a.removed_at IS NULL AND a.disabled = 0 ORDER BY a.id`)
	if err != nil {
		return nil, fmt.Errorf("read auto-tier accounts: %w", err)
	}
	type acct struct {
		id                  int64
		name, tier, quality string
		since, after        int64
		dailyCap            int
	}
	var accts []acct
	for rows.Next() {
		var a acct
		if err := rows.Scan(&a.id, &a.name, &a.tier, &a.since, &a.after, &a.dailyCap, &a.quality); err != nil {
			rows.Close()
			return nil, err
		}
		accts = append(accts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	now := r.now()
	out := map[string]campaign.TierProgress{}
	for _, a := range accts {
		since := fromNanos(a.since)
		days, err := r.tierDays(ctx, a.id, since, loc)
		if err != nil {
			return nil, err
		}
		out[a.name] = campaign.AssessTier(a.tier, since, now, time.Duration(a.after), a.dailyCap, days, a.quality)
	}
	return out, nil
}

// tierDays are an account's requests since a time, by quota day in loc.
func (r *Reader) tierDays(ctx context.Context, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT claimed_at, coalesce(outcome, ''), coalesce(class, ''), coalesce(error_code, 0)
		FROM attempts WHERE account_id = ? AND claimed_at >= ?`, id, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer rows.Close()
	var reqs []campaign.TierRequest
	for rows.Next() {
		var (
			q  campaign.TierRequest
			at int64
		)
		if err := rows.Scan(&at, &q.Outcome, &q.Class, &q.ErrorCode); err != nil {
			return nil, err
		}
		q.At = fromNanos(at)
		reqs = append(reqs, q)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return campaign.DaysOf(reqs, loc), nil
}
