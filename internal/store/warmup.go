package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// changeTier moves an account to another tier, resets its time in tier and
// logs why. The tier's limits apply from the next claim; tokens earned so
// far are kept (the bucket's cap trims them to a lower burst).
func changeTier(ctx context.Context, tx *Tx, id int64, from, to string, now time.Time, why string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET tier = ?, tier_since = ? WHERE id = ?`, to, now.UnixNano(), id); err != nil {
		return fmt.Errorf("change tier: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES (?, ?, ?, ?, ?)`,
		id, now.UnixNano(), from, to, why); err != nil {
		return fmt.Errorf("log tier change: %w", err)
	}
	return nil
}

// startTier sets a new account's warm-up: auto-tier on unless manual, in
// its tier from now.
func startTier(ctx context.Context, tx *Tx, id int64, tier string, manual bool, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET auto_tier = ?, tier_since = ? WHERE id = ?`, !manual, now.UnixNano(), id); err != nil {
		return fmt.Errorf("start tier: %w", err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES (?, ?, '', ?, ?)`,
		id, now.UnixNano(), tier, campaign.AutoTierNote(!manual, true))
	return err
}

// SetAutoTier turns an account's warm-up on or off and sets its time to
// promotion; nil fields stay.
func (s *Store) SetAutoTier(ctx context.Context, name string, on *bool, promoteAfter *time.Duration) error {
	return s.write(ctx, func(tx *Tx) error {
		var (
			id   int64
			tier string
			was  bool
		)
		err := tx.QueryRowContext(ctx, `SELECT id, tier, auto_tier FROM accounts WHERE name = ? AND removed_at IS NULL`, name).
			Scan(&id, &tier, &was)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read account %s: %w", name, err)
		}
		if promoteAfter != nil {
			if err := campaign.CheckPromoteAfter(*promoteAfter); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET promote_after = ? WHERE id = ?`, int64(*promoteAfter), id); err != nil {
				return fmt.Errorf("account %s: %w", name, err)
			}
		}
		if on != nil && *on != was {
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET auto_tier = ? WHERE id = ?`, *on, id); err != nil {
				return fmt.Errorf("account %s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES (?, ?, ?, ?, ?)`,
				id, s.now().UnixNano(), tier, tier, campaign.AutoTierNote(*on, false)); err != nil {
				return fmt.Errorf("log tier change: %w", err)
			}
		}
		return nil
	})
}

// tierState is an auto-tier account as warm-up judges it.
type tierState struct {
	id           int64
	name, tier   string
	since        time.Time
	promoteAfter time.Duration
	dailyCap     int    // the tier's
	quality      string // from the last sync, "" when never read
}

func autoTierAccounts(ctx context.Context, q querier, where string, args ...any) ([]tierState, error) {
	rows, err := q.QueryContext(ctx, `SELECT a.id, a.name, a.tier, a.tier_since, a.promote_after, t.daily_cap, a.quality_rating
		FROM accounts a JOIN tiers t ON t.name = a.tier
		WHERE a.auto_tier = 1 AND a.removed_at IS NULL AND a.disabled = 0 `+where+` ORDER BY a.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read auto-tier accounts: %w", err)
	}
	defer rows.Close()
	var out []tierState
	for rows.Next() {
		var a tierState
		var since, after int64
		if err := rows.Scan(&a.id, &a.name, &a.tier, &since, &after, &a.dailyCap, &a.quality); err != nil {
			return nil, err
		}
		a.since, a.promoteAfter = fromNanos(since), time.Duration(after)
		out = append(out, a)
	}
	return out, rows.Err()
}

// tierDays are an account's requests since a time, by quota day in loc.
// It reads the account's attempts (an index range: a few hundred a day
// at the tiers' rates).
func tierDays(ctx context.Context, q querier, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	rows, err := q.QueryContext(ctx, `SELECT claimed_at, coalesce(outcome, ''), coalesce(class, ''), coalesce(error_code, 0)
		FROM attempts WHERE account_id = ? AND claimed_at >= ?`, id, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer rows.Close()
	var reqs []campaign.TierRequest
	for rows.Next() {
		var (
			r  campaign.TierRequest
			at int64
		)
		if err := rows.Scan(&at, &r.Outcome, &r.Class, &r.ErrorCode); err != nil {
			return nil, err
		}
		r.At = fromNanos(at)
		reqs = append(reqs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return campaign.DaysOf(reqs, loc), nil
}

// promoteDue promotes every auto-tier account whose record earns it,
// logging why; run with each quota reset.
func promoteDue(ctx context.Context, tx *Tx, now time.Time, loc *time.Location) ([]campaign.TierChange, error) {
	accts, err := autoTierAccounts(ctx, tx, ``)
	if err != nil {
		return nil, err
	}
	var out []campaign.TierChange
	for _, a := range accts {
		days, err := tierDays(ctx, tx, a.id, a.since, loc)
		if err != nil {
			return nil, err
		}
		p := campaign.AssessTier(a.tier, a.since, now, a.promoteAfter, a.dailyCap, days, a.quality)
		if !p.Ready {
			continue
		}
		why := p.Promotion(a.dailyCap)
		if err := changeTier(ctx, tx, a.id, a.tier, p.Next, now, why); err != nil {
			return nil, err
		}
		out = append(out, campaign.TierChange{Account: a.name, At: now, From: a.tier, To: p.Next, Reason: why})
	}
	return out, nil
}

// demoteOnTrouble demotes an auto-tier account as campaign.Demotion
// judges outcome o.
func demoteOnTrouble(ctx context.Context, tx *Tx, id int64, o campaign.Outcome, now time.Time) error {
	if !campaign.MayDemote(o) {
		return nil
	}
	accts, err := autoTierAccounts(ctx, tx, `AND a.id = ?`, id)
	if err != nil || len(accts) == 0 {
		return err
	}
	a := accts[0]
	to, why, err := campaign.Demotion(a.tier, a.since, now, o, func() (requests, throttled int, err error) {
		err = tx.QueryRowContext(ctx, `SELECT count(*), count(CASE WHEN error_code = 130429 THEN 1 END) FROM attempts
			WHERE account_id = ? AND claimed_at >= ?`, id, now.Add(-time.Hour).UnixNano()).Scan(&requests, &throttled)
		if err != nil {
			err = fmt.Errorf("read throttles of account %d: %w", id, err)
		}
		return requests, throttled, err
	})
	if err != nil || to == "" {
		return err
	}
	return changeTier(ctx, tx, id, a.tier, to, now, why)
}

// TierProgress is each auto-tier account's way to its next tier, by name.
func (s *Store) TierProgress(ctx context.Context) (map[string]campaign.TierProgress, error) {
	accts, err := autoTierAccounts(ctx, s.db, ``)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := map[string]campaign.TierProgress{}
	for _, a := range accts {
		days, err := tierDays(ctx, s.db, a.id, a.since, s.loc)
		if err != nil {
			return nil, err
		}
		out[a.name] = campaign.AssessTier(a.tier, a.since, now, a.promoteAfter, a.dailyCap, days, a.quality)
	}
	return out, nil
}
