package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// account is an account as stored: its status, its health, its
// portfolio's settings (read the same way on SQLite).
type account = rowscan.Account

var fromNanos = rowscan.FromNanos

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// loadAccounts reads accounts not removed, joined with their tier and
// portfolio; where is appended and its placeholders start at $2.
func loadAccounts(ctx context.Context, q querier, where string, args ...any) ([]account, error) {
	rows, err := q.Query(ctx, rowscan.AccountQuery("$1")+where, append([]any{driver.DefaultMargin}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	defer rows.Close()
	return rowscan.Accounts(rows)
}

// Accounts returns every account with its limits and live limiter state at
// the driver's clock.
func (s *Store) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	accts, err := loadAccounts(ctx, s.pool, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	return rowscan.StatusesAt(accts, s.now()), nil
}

// Account returns one account by name.
func (s *Store) Account(ctx context.Context, name string) (st campaign.AccountStatus, err error) {
	accts, err := loadAccounts(ctx, s.pool, `WHERE a.name = $2`, name)
	if err == nil && len(accts) == 0 {
		err = fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	if err == nil {
		st = accts[0].StatusAt(s.now())
	}
	return st, err
}

// AddAccount stores a new account: its bucket starts full and its quota
// day starts today.
func (s *Store) AddAccount(ctx context.Context, a campaign.Account) (campaign.Account, error) {
	if !campaign.ValidTier(a.Tier) {
		return a, fmt.Errorf("tier %q: must be one of new, warm, active", a.Tier)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var tier campaign.Limits
		if err := tx.QueryRow(ctx, `SELECT rate, burst, daily_cap FROM tiers WHERE name = $1`, a.Tier).
			Scan(&tier.Rate, &tier.Burst, &tier.DailyCap); err != nil {
			return fmt.Errorf("read tier %s: %w", a.Tier, err)
		}
		if err := a.Overrides.Apply(tier).Validate(); err != nil {
			return fmt.Errorf("account %s: %w", a.Name, err)
		}
		l := a.SendLimits(tier, 0)
		// A taken name is the first thing to say: callers tell it apart.
		var taken int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE name = $1`, a.Name).Scan(&taken); err != nil {
			return fmt.Errorf("read account %s: %w", a.Name, err)
		}
		if taken > 0 {
			return fmt.Errorf("account %q: %w", a.Name, driver.ErrExists)
		}
		var other string
		err := tx.QueryRow(ctx, `SELECT name FROM accounts WHERE phone_number_id = $1 AND removed_at IS NULL
			ORDER BY id LIMIT 1`, a.PhoneNumberID).Scan(&other)
		switch {
		case err == nil:
			return fmt.Errorf("account %s: phone number id %s is %w by account %s (one number, one account: two would send at twice its rate)",
				a.Name, a.PhoneNumberID, driver.ErrNumberTaken, other)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look up phone number id %s: %w", a.PhoneNumberID, err)
		}
		var pid *int64
		if a.Portfolio != "" {
			var id int64
			err := tx.QueryRow(ctx, `SELECT id FROM portfolios WHERE name = $1`, a.Portfolio).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("account %s: portfolio %q: %w (add it with `wasend portfolio add %s`)", a.Name, a.Portfolio, campaign.ErrNotFound, a.Portfolio)
			}
			if err != nil {
				return fmt.Errorf("account %s: read portfolio %s: %w", a.Name, a.Portfolio, err)
			}
			pid = &id
		}
		now := s.now()
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		var pinned *float64
		if a.ThroughputPinned != 0 {
			pinned = &a.ThroughputPinned
		}
		disabled := 0
		if a.Disabled {
			disabled = 1
		}
		err = tx.QueryRow(ctx, `INSERT INTO accounts
			(name, phone_number_id, tier, token_env, rate, burst, daily_cap, disabled, created_at, tokens, tokens_at, quota_day,
			portfolio_id, throughput_pinned, waba_id, auto_tier, tier_since)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING id`,
			a.Name, a.PhoneNumberID, a.Tier, a.TokenEnv, a.Overrides.Rate, a.Overrides.Burst, a.Overrides.DailyCap,
			disabled, now.UnixNano(), float64(l.Burst), now.UnixNano(), s.Today(now), pid, pinned, a.WABA,
			boolInt(!a.ManualTier), now.UnixNano()).Scan(&a.ID)
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
				return fmt.Errorf("account %q: %w", a.Name, driver.ErrExists)
			}
			return fmt.Errorf("insert account %s: %w", a.Name, err)
		}
		a.CreatedAt = now
		_, err = tx.Exec(ctx, `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES ($1, $2, '', $3, $4)`,
			a.ID, now.UnixNano(), a.Tier, campaign.AutoTierNote(!a.ManualTier, true))
		return err
	})
	return a, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// releaseHeld frees rows put off for the reach or a cap, and idle
// campaigns, after a change that may let them go (SQLite's releaseHeld).
func releaseHeld(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = $1
		WHERE window_wait >= $2 AND state = 'pending'`, int(driver.PutOffNone), int(driver.PutOffReach)); err != nil {
		return fmt.Errorf("release rows held for the reach or a cap: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE campaigns SET idle_until = 0 WHERE idle_until <> 0`); err != nil {
		return fmt.Errorf("end idle campaigns: %w", err)
	}
	return nil
}

// SetGlobalLimit turns the global bucket on with l (tokens earned at the
// old rate kept), or off when on is false.
func (s *Store) SetGlobalLimit(ctx context.Context, on bool, l ratelimit.Limit) error {
	if on {
		if err := (campaign.Limits{Rate: l.Rate, Burst: l.Burst}).Validate(); err != nil {
			return fmt.Errorf("global limit: %w", err)
		}
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			wasOn       int64
			old         ratelimit.Limit
			b           ratelimit.Bucket
			at, oldBurs int64
		)
		if err := tx.QueryRow(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1 FOR UPDATE`).
			Scan(&wasOn, &old.Rate, &oldBurs, &b.Tokens, &at); err != nil {
			return fmt.Errorf("read global limit: %w", err)
		}
		old.Burst, b.At = int(oldBurs), fromNanos(at)
		if !on {
			_, err := tx.Exec(ctx, `UPDATE global_limit SET enabled = 0 WHERE id = 1`)
			return err
		}
		now := s.now()
		if wasOn != 0 {
			b = b.Relimit(old, l, now)
		} else {
			b = ratelimit.Full(l, now)
		}
		_, err := tx.Exec(ctx, `UPDATE global_limit SET enabled = 1, rate = $1, burst = $2, tokens = $3, tokens_at = $4 WHERE id = 1`,
			l.Rate, l.Burst, b.Tokens, nanos(b.At))
		return err
	})
}

// relimit settles a's bucket at now under its old limit and restates it
// under to: tokens earned at the old rate are kept.
func relimit(ctx context.Context, tx pgx.Tx, a account, to campaign.Limits, now time.Time) error {
	from := a.Health.Scale(ratelimit.Limit{Rate: a.Limits.Rate, Burst: a.Limits.Burst}, now)
	b := ratelimit.Bucket{Tokens: a.Tokens, At: a.At}.Relimit(from, a.Health.Scale(ratelimit.Limit{Rate: to.Rate, Burst: to.Burst}, now), now)
	if _, err := tx.Exec(ctx, `UPDATE accounts SET tokens = $1, tokens_at = $2 WHERE id = $3`, b.Tokens, nanos(b.At), a.ID); err != nil {
		return fmt.Errorf("settle bucket of %s: %w", a.Name, err)
	}
	return nil
}

// lockAccount is the named account, its row locked for the transaction:
// two hosts changing it at once go one after the other.
func lockAccount(ctx context.Context, tx pgx.Tx, name string) (account, error) {
	if _, err := tx.Exec(ctx, `SELECT id FROM accounts WHERE name = $1 AND removed_at IS NULL FOR UPDATE`, name); err != nil {
		return account{}, fmt.Errorf("lock account %s: %w", name, err)
	}
	accts, err := loadAccounts(ctx, tx, `WHERE a.name = $2`, name)
	if err == nil && len(accts) == 0 {
		err = fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	if err != nil {
		return account{}, err
	}
	return accts[0], nil
}

// UpdateAccount applies a change to the named account; a change of limits
// settles the tokens earned so far first. The account's row is locked for
// the change: two hosts changing it at once go one after the other.
func (s *Store) UpdateAccount(ctx context.Context, name string, ch campaign.AccountChange) (campaign.AccountStatus, error) {
	var out campaign.AccountStatus
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := lockAccount(ctx, tx, name)
		if err != nil {
			return err
		}
		was := a.Account
		if err := ch.Apply(&a.Account); err != nil {
			return err
		}
		now := s.now()
		if a.Tier != was.Tier {
			if err := (warmupTx{tx}).ChangeTier(ctx, a.ID, was.Tier, a.Tier, now, "set by the operator"); err != nil {
				return err
			}
		}
		movesNumber := a.PhoneNumberID != was.PhoneNumberID
		if movesNumber {
			var other string
			err := tx.QueryRow(ctx, `SELECT name FROM accounts WHERE phone_number_id = $1 AND id <> $2 AND removed_at IS NULL
				ORDER BY id LIMIT 1`, a.PhoneNumberID, a.ID).Scan(&other)
			switch {
			case err == nil:
				return fmt.Errorf("account %s: phone number id %s is %w by account %s (one number, one account: two would send at twice its rate)",
					a.Name, a.PhoneNumberID, driver.ErrNumberTaken, other)
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("look up phone number id %s: %w", a.PhoneNumberID, err)
			}
		}
		var tier campaign.Limits
		if err := tx.QueryRow(ctx, `SELECT rate, burst, daily_cap FROM tiers WHERE name = $1`, a.Tier).
			Scan(&tier.Rate, &tier.Burst, &tier.DailyCap); err != nil {
			return fmt.Errorf("read tier %s: %w", a.Tier, err)
		}
		if err := a.Overrides.Apply(tier).Validate(); err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if err := relimit(ctx, tx, a, a.SendLimits(tier, a.ThroughputRead), now); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		var pinned *float64
		if a.ThroughputPinned != 0 {
			pinned = &a.ThroughputPinned
		}
		_, err = tx.Exec(ctx, `UPDATE accounts SET tier = $1, phone_number_id = $2, token_env = $3,
			rate = $4, burst = $5, daily_cap = $6, disabled = $7, throughput_pinned = $8, waba_id = $9 WHERE id = $10`,
			a.Tier, a.PhoneNumberID, a.TokenEnv, a.Overrides.Rate, a.Overrides.Burst, a.Overrides.DailyCap, boolInt(a.Disabled),
			pinned, a.WABA, a.ID)
		if err != nil {
			return fmt.Errorf("update account %s: %w", name, err)
		}
		if ch.Portfolio != nil {
			var pid *int64
			if *ch.Portfolio != "" {
				var id int64
				err := tx.QueryRow(ctx, `SELECT id FROM portfolios WHERE name = $1`, *ch.Portfolio).Scan(&id)
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("account %s: portfolio %q: %w (add it with `wasend portfolio add %s`)", name, *ch.Portfolio, campaign.ErrNotFound, *ch.Portfolio)
				}
				if err != nil {
					return fmt.Errorf("account %s: read portfolio %s: %w", name, *ch.Portfolio, err)
				}
				pid = &id
			}
			if _, err := tx.Exec(ctx, `UPDATE accounts SET portfolio_id = $1 WHERE id = $2`, pid, a.ID); err != nil {
				return fmt.Errorf("update account %s: %w", name, err)
			}
		}
		if movesNumber {
			// A number of its own: out of any pair kept from SQLite's 0007.
			if _, err := tx.Exec(ctx, `UPDATE accounts SET shared_number = 0 WHERE id = $1`, a.ID); err != nil {
				return fmt.Errorf("update account %s: %w", name, err)
			}
		}
		accts, err := loadAccounts(ctx, tx, `WHERE a.id = $2`, a.ID)
		if err != nil {
			return err
		}
		out = accts[0].StatusAt(now)
		return nil
	})
	return out, err
}
