package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/tierrecord"
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

// promoteDue promotes every auto-tier account whose record earns it,
// logging why; run with each quota reset.
func promoteDue(ctx context.Context, tx *Tx, now time.Time, loc *time.Location) ([]campaign.TierChange, error) {
	accts, err := tierrecord.Accounts(ctx, tx, ``)
	if err != nil {
		return nil, err
	}
	var out []campaign.TierChange
	for _, a := range accts {
		days, err := tierrecord.Days(ctx, tx, a.ID, a.Since, loc)
		if err != nil {
			return nil, err
		}
		p := campaign.AssessTier(a.Tier, a.Since, now, a.PromoteAfter, a.DailyCap, days, a.Quality)
		if !p.Ready {
			continue
		}
		why := p.Promotion(a.DailyCap)
		if err := changeTier(ctx, tx, a.ID, a.Tier, p.Next, now, why); err != nil {
			return nil, err
		}
		out = append(out, campaign.TierChange{Account: a.Name, At: now, From: a.Tier, To: p.Next, Reason: why})
	}
	return out, nil
}

// demoteOnTrouble demotes an auto-tier account as campaign.Demotion
// judges outcome o.
func demoteOnTrouble(ctx context.Context, tx *Tx, id int64, o campaign.Outcome, now time.Time) error {
	if !campaign.MayDemote(o) {
		return nil
	}
	accts, err := tierrecord.Accounts(ctx, tx, `AND a.id = ?`, id)
	if err != nil || len(accts) == 0 {
		return err
	}
	a := accts[0]
	to, why, err := campaign.Demotion(a.Tier, a.Since, now, o, func() (requests, throttled int, err error) {
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
	return changeTier(ctx, tx, id, a.Tier, to, now, why)
}
