package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/quotareset"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// SetTier changes a tier's limits. Buckets of the accounts that follow the
// tier first book the tokens they earned at the old rate, so a change keeps
// what was earned and grants nothing retroactively.
func (s *Store) SetTier(ctx context.Context, name string, l campaign.Limits) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	return s.write(ctx, func(tx *Tx) error {
		accts, err := loadAccounts(ctx, tx, `WHERE a.tier = ?`, name)
		if err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE tiers SET rate = ?, burst = ?, daily_cap = ? WHERE name = ?`,
			l.Rate, l.Burst, l.DailyCap, name)
		if err != nil {
			return fmt.Errorf("update tier %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("tier %q: %w (tiers: new, warm, active)", name, campaign.ErrNotFound)
		}
		now := s.now()
		for _, a := range accts {
			if err := relimit(ctx, tx, a, a.SendLimits(l, a.ThroughputRead), now); err != nil {
				return err
			}
		}
		return nil
	})
}

func relimit(ctx context.Context, tx *Tx, a account, to campaign.Limits, now time.Time) error {
	b := a.bucket().Relimit(a.limit(now), a.health.Scale(bucketLimit(to), now), now)
	_, err := tx.ExecContext(ctx, `UPDATE accounts SET tokens = ?, tokens_at = ? WHERE id = ?`, b.Tokens, nanos(b.At), a.ID)
	if err != nil {
		return fmt.Errorf("settle bucket of %s: %w", a.Name, err)
	}
	return nil
}

// tierLimits reads a tier's limits.
func tierLimits(ctx context.Context, tx *Tx, name string) (campaign.Limits, error) {
	var l campaign.Limits
	if err := tx.QueryRowContext(ctx, `SELECT rate, burst, daily_cap FROM tiers WHERE name = ?`, name).
		Scan(&l.Rate, &l.Burst, &l.DailyCap); err != nil {
		return l, fmt.Errorf("read tier %s: %w", name, err)
	}
	return l, nil
}

func bucketLimit(l campaign.Limits) ratelimit.Limit {
	return ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
}

// AddAccount stores a new account. Its bucket starts full and its quota day
// starts today.
func (s *Store) AddAccount(ctx context.Context, a campaign.Account) (campaign.Account, error) {
	if !campaign.ValidTier(a.Tier) {
		return a, fmt.Errorf("tier %q: must be one of new, warm, active", a.Tier)
	}
	err := s.write(ctx, func(tx *Tx) error {
		tier, err := tierLimits(ctx, tx, a.Tier)
		if err != nil {
			return err
		}
		if err := a.Overrides.Apply(tier).Validate(); err != nil {
			return fmt.Errorf("account %s: %w", a.Name, err)
		}
		l := a.SendLimits(tier, 0)
		// A taken name is the first thing to say: callers tell it apart.
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE name = ?`, a.Name).Scan(&taken); err != nil {
			return fmt.Errorf("read account %s: %w", a.Name, err)
		}
		if taken > 0 {
			return fmt.Errorf("account %q: %w", a.Name, driver.ErrExists)
		}
		if err := numberFree(ctx, tx, a.Name, a.PhoneNumberID, 0); err != nil {
			return err
		}
		pid, err := portfolioID(ctx, tx, a.Portfolio)
		if err != nil {
			return fmt.Errorf("account %s: %w", a.Name, err)
		}
		now := s.now()
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO accounts
			(name, phone_number_id, tier, token_env, rate, burst, daily_cap, disabled, created_at, tokens, tokens_at, quota_day,
			portfolio_id, throughput_pinned, waba_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.Name, a.PhoneNumberID, a.Tier, a.TokenEnv, a.Overrides.Rate, a.Overrides.Burst, a.Overrides.DailyCap,
			a.Disabled, now.UnixNano(), float64(l.Burst), now.UnixNano(), s.today(now), pid, nullThroughput(a.ThroughputPinned), a.WABA)
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("account %q: %w", a.Name, driver.ErrExists)
			}
			return fmt.Errorf("insert account %s: %w", a.Name, err)
		}
		a.ID, _ = res.LastInsertId()
		a.CreatedAt = now
		return startTier(ctx, tx, a.ID, a.Tier, a.ManualTier, now)
	})
	return a, err
}

// UpdateAccount applies a change to the named account. A change of limits
// books the tokens earned so far first, as SetTier does.
func (s *Store) UpdateAccount(ctx context.Context, name string, ch campaign.AccountChange) (campaign.AccountStatus, error) {
	var out campaign.AccountStatus
	err := s.write(ctx, func(tx *Tx) error {
		accts, err := loadAccounts(ctx, tx, `WHERE a.name = ?`, name)
		if err != nil {
			return err
		}
		if len(accts) == 0 {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		a := accts[0]
		was := a.Account
		if err := ch.Apply(&a.Account); err != nil {
			return err
		}
		if a.Tier != was.Tier {
			if err := (warmupTx{tx}).ChangeTier(ctx, a.ID, was.Tier, a.Tier, s.now(), "set by the operator"); err != nil {
				return err
			}
		}
		movesNumber := a.PhoneNumberID != was.PhoneNumberID
		if movesNumber {
			if err := numberFree(ctx, tx, a.Name, a.PhoneNumberID, a.ID); err != nil {
				return err
			}
		}
		tier, err := tierLimits(ctx, tx, a.Tier)
		if err != nil {
			return err
		}
		if err := a.Overrides.Apply(tier).Validate(); err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if err := relimit(ctx, tx, a, a.SendLimits(tier, a.ThroughputRead), s.now()); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET tier = ?, phone_number_id = ?, token_env = ?,
			rate = ?, burst = ?, daily_cap = ?, disabled = ?, throughput_pinned = ?, waba_id = ?, api = ? WHERE id = ?`,
			a.Tier, a.PhoneNumberID, a.TokenEnv, a.Overrides.Rate, a.Overrides.Burst, a.Overrides.DailyCap, a.Disabled,
			nullThroughput(a.ThroughputPinned), a.WABA, string(a.API), a.ID)
		if err != nil {
			return fmt.Errorf("update account %s: %w", name, err)
		}
		if ch.Portfolio != nil {
			pid, err := portfolioID(ctx, tx, *ch.Portfolio)
			if err != nil {
				return fmt.Errorf("account %s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET portfolio_id = ? WHERE id = ?`, pid, a.ID); err != nil {
				return fmt.Errorf("update account %s: %w", name, err)
			}
		}
		if movesNumber {
			// A number of its own: out of any pair kept from before 0007.
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET shared_number = 0 WHERE id = ?`, a.ID); err != nil {
				return fmt.Errorf("update account %s: %w", name, err)
			}
		}
		accts, err = loadAccounts(ctx, tx, `WHERE a.id = ?`, a.ID)
		if err != nil {
			return err
		}
		out = accts[0].status(s.now())
		return nil
	})
	return out, err
}

func nullThroughput(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: v != 0} }

// Accounts returns every account with its effective limits and live
// limiter state at the store's clock.
func (s *Store) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	accts, err := loadAccounts(ctx, s.db, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]campaign.AccountStatus, len(accts))
	for i, a := range accts {
		out[i] = a.status(now)
	}
	return out, nil
}

// Account returns one account by name.
func (s *Store) Account(ctx context.Context, name string) (campaign.AccountStatus, error) {
	accts, err := loadAccounts(ctx, s.db, `WHERE a.name = ?`, name)
	if err != nil {
		return campaign.AccountStatus{}, err
	}
	if len(accts) == 0 {
		return campaign.AccountStatus{}, fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
	}
	return accts[0].status(s.now()), nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// account is an account as stored: its status plus its health.
type account struct {
	campaign.AccountStatus
	health ratelimit.Health
	// The portfolio's settings (portfolioID 0: a portfolio of its own).
	portfolioID int64
	pinnedLimit int
	margin      float64
}

// limit is the account's bucket limit at t: the configured rate scaled by
// its health.
func (a account) limit(t time.Time) ratelimit.Limit {
	return a.health.Scale(bucketLimit(a.Limits), t)
}

func (a account) bucket() ratelimit.Bucket { return ratelimit.Bucket{Tokens: a.Tokens, At: a.At} }

// status is the account as shown at t, its bucket and rate factor settled.
func (a account) status(t time.Time) campaign.AccountStatus {
	return rowscan.Account{AccountStatus: a.AccountStatus, Health: a.health}.StatusAt(t)
}

// loadAccounts reads accounts joined with their tier. Tokens and At are the
// stored bucket, not yet refilled. Removed accounts are not among them.
func loadAccounts(ctx context.Context, q querier, where string, args ...any) ([]account, error) {
	rows, err := q.QueryContext(ctx, rowscan.AccountQuery("?")+where, append([]any{driver.DefaultMargin}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	defer rows.Close()
	rs, err := rowscan.Accounts(rows)
	out := make([]account, len(rs))
	for i, r := range rs {
		out[i] = account{AccountStatus: r.AccountStatus, health: r.Health, portfolioID: r.PortfolioID, pinnedLimit: r.PinnedLimit, margin: r.Margin}
	}
	return out, err
}

// SetGlobalLimit turns the global bucket on with l, or off when on is false.
func (s *Store) SetGlobalLimit(ctx context.Context, on bool, l ratelimit.Limit) error {
	if on {
		if err := (campaign.Limits{Rate: l.Rate, Burst: l.Burst}).Validate(); err != nil {
			return fmt.Errorf("global limit: %w", err)
		}
	}
	return s.write(ctx, func(tx *Tx) error {
		var (
			wasOn bool
			old   ratelimit.Limit
			b     ratelimit.Bucket
			at    int64
		)
		if err := tx.QueryRowContext(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`).
			Scan(&wasOn, &old.Rate, &old.Burst, &b.Tokens, &at); err != nil {
			return fmt.Errorf("read global limit: %w", err)
		}
		now := s.now()
		b.At = fromNanos(at)
		if !on {
			_, err := tx.ExecContext(ctx, `UPDATE global_limit SET enabled = 0 WHERE id = 1`)
			return err
		}
		if wasOn {
			b = b.Relimit(old, l, now)
		} else {
			b = ratelimit.Full(l, now)
		}
		_, err := tx.ExecContext(ctx, `UPDATE global_limit SET enabled = 1, rate = ?, burst = ?, tokens = ?, tokens_at = ? WHERE id = 1`,
			l.Rate, l.Burst, b.Tokens, nanos(b.At))
		return err
	})
}

// ResetQuota starts a new quota day for the named accounts (all when names is
// empty). Quota days only move forward: an account whose quota day is today
// or later is left alone unless force is set — which zeroes the count but
// never moves the day back — so a cron line that runs twice, a clock set
// back or a shell in another zone cannot double a cap. Days follow the zone
// fixed in the database; a store opened asking for another zone returns a
// *campaign.ZoneMismatchError and resets nothing.
func (s *Store) ResetQuota(ctx context.Context, names []string, force bool) ([]campaign.QuotaReset, error) {
	if s.zoneErr != nil {
		return nil, s.zoneErr
	}
	var out []campaign.QuotaReset
	err := s.write(ctx, func(tx *Tx) error {
		out = nil // write may run fn again after a busy error
		accts, err := loadAccounts(ctx, tx, `ORDER BY a.id`)
		if err != nil {
			return err
		}
		sts := make([]campaign.AccountStatus, len(accts))
		for i, a := range accts {
			sts[i] = a.AccountStatus
		}
		now := s.now()
		steps, err := quotareset.Plan(sts, names, s.today(now), force)
		if err != nil {
			return err
		}
		for _, st := range steps {
			if st.QuotaReset.Reset {
				if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = 0, quota_day = ?, quota_epoch = quota_epoch + 1 WHERE id = ?`,
					st.To, st.ID); err != nil {
					return fmt.Errorf("reset quota of %s: %w", st.Account, err)
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO quota_resets (account_id, day, at, forced) VALUES (?, ?, ?, ?)`,
					st.ID, st.To, now.UnixNano(), force); err != nil {
					return fmt.Errorf("log quota reset: %w", err)
				}
			}
			out = append(out, st.QuotaReset)
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		// A new quota day is when warm-up judges the days before it.
		promoted, err := tierrecord.PromoteDue(ctx, warmupTx{tx}, now, s.loc)
		quotareset.Promote(out, promoted)
		return err
	})
	return out, err
}

// RecordCheck keeps what a check of the account found (a run's preflight,
// `account test`): why it failed, or, with an empty finding, that it
// passed. The finding is the API's word or the missing variable's name,
// never a token.
func (s *Store) RecordCheck(ctx context.Context, accountID int64, f campaign.CheckFinding) error {
	return s.write(ctx, func(tx *Tx) error {
		var at int64
		if f.Failed() {
			at = nanos(f.At)
		} else {
			f.Code = 0
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET check_error = ?, check_code = ?, checked_at = ? WHERE id = ?`,
			f.Error, f.Code, at, accountID); err != nil {
			return fmt.Errorf("record the check of account %d: %w", accountID, err)
		}
		return nil
	})
}
