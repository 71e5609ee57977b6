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

// warmupTx is warm-up's view of a transaction (tierrecord.Tx).
type warmupTx struct{ tx *Tx }

func (w warmupTx) AutoTierAccounts(ctx context.Context, id int64) ([]tierrecord.Account, error) {
	if id > 0 {
		return tierrecord.Accounts(ctx, w.tx, `AND a.id = ?`, id)
	}
	return tierrecord.Accounts(ctx, w.tx, ``)
}

func (w warmupTx) TierDays(ctx context.Context, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	return tierrecord.Days(ctx, w.tx, id, since, loc)
}

func (w warmupTx) LastHour(ctx context.Context, id int64, since time.Time) (requests, throttled int, err error) {
	err = w.tx.QueryRowContext(ctx, tierrecord.LastHourSQL, id, since.UnixNano()).Scan(&requests, &throttled)
	if err != nil {
		err = fmt.Errorf("read throttles of account %d: %w", id, err)
	}
	return requests, throttled, err
}

func (w warmupTx) ChangeTier(ctx context.Context, id int64, from, to string, now time.Time, why string) error {
	if _, err := w.tx.ExecContext(ctx, tierrecord.ChangeTierSQL, to, now.UnixNano(), id); err != nil {
		return fmt.Errorf("change tier: %w", err)
	}
	if _, err := w.tx.ExecContext(ctx, tierrecord.LogTierSQL, id, now.UnixNano(), from, to, why); err != nil {
		return fmt.Errorf("log tier change: %w", err)
	}
	return nil
}
