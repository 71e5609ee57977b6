package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/quotareset"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// ResetQuota opens a new quota day for the named accounts (all when none):
// only forward, once a day unless forced, as on SQLite (accounts.go). The
// accounts' rows are locked first: a claim counting sends on them waits,
// or is waited for.
func (s *Store) ResetQuota(ctx context.Context, names []string, force bool) ([]campaign.QuotaReset, error) {
	if s.zoneErr != nil {
		return nil, s.zoneErr
	}
	var out []campaign.QuotaReset
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = nil // a retried transaction starts over
		if _, err := tx.Exec(ctx, `SELECT id FROM accounts WHERE removed_at IS NULL ORDER BY id FOR UPDATE`); err != nil {
			return fmt.Errorf("lock accounts: %w", err)
		}
		accts, err := loadAccounts(ctx, tx, `ORDER BY a.id`)
		if err != nil {
			return err
		}
		now := s.now()
		steps, err := quotareset.Plan(rowscan.StatusesAt(accts, now), names, s.Today(now), force)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, st := range steps {
			if st.QuotaReset.Reset {
				b.Queue(`UPDATE accounts SET used_today = 0, quota_day = $1, quota_epoch = quota_epoch + 1 WHERE id = $2`, st.To, st.ID)
				b.Queue(`INSERT INTO quota_resets (account_id, day, at, forced) VALUES ($1, $2, $3, $4)`,
					st.ID, st.To, now.UnixNano(), boolInt(force))
			}
			out = append(out, st.QuotaReset)
		}
		if err := send(ctx, tx, b); err != nil {
			return fmt.Errorf("reset quotas: %w", err)
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

// warmupTx is warm-up's view of a transaction (tierrecord.Tx).
type warmupTx struct{ tx pgx.Tx }

func (w warmupTx) AutoTierAccounts(ctx context.Context, id int64) ([]tierrecord.Account, error) {
	where, args := ``, []any{}
	if id > 0 {
		where, args = `AND a.id = $1`, []any{id}
	}
	rows, err := w.tx.Query(ctx, tierrecord.AccountsSQL+where+` ORDER BY a.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read auto-tier accounts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tierrecord.Account, error) { return tierrecord.ScanAccount(row) })
	if err != nil {
		return nil, fmt.Errorf("read auto-tier accounts: %w", err)
	}
	return out, nil
}

func (w warmupTx) TierDays(ctx context.Context, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	return tierDays(ctx, w.tx, id, since, loc)
}

func (w warmupTx) LastHour(ctx context.Context, id int64, since time.Time) (requests, throttled int, err error) {
	var r, t int64
	err = w.tx.QueryRow(ctx, lastHourSQL, id, since.UnixNano()).Scan(&r, &t)
	if err != nil {
		err = fmt.Errorf("read throttles of account %d: %w", id, err)
	}
	return int(r), int(t), err
}

func (w warmupTx) ChangeTier(ctx context.Context, id int64, from, to string, now time.Time, why string) error {
	if _, err := w.tx.Exec(ctx, changeTierSQL, to, now.UnixNano(), id); err != nil {
		return fmt.Errorf("change tier: %w", err)
	}
	if _, err := w.tx.Exec(ctx, logTierSQL, id, now.UnixNano(), from, to, why); err != nil {
		return fmt.Errorf("log tier change: %w", err)
	}
	return nil
}

var (
	lastHourSQL   = dialect.Postgres.Bind(tierrecord.LastHourSQL)
	changeTierSQL = dialect.Postgres.Bind(tierrecord.ChangeTierSQL)
	logTierSQL    = dialect.Postgres.Bind(tierrecord.LogTierSQL)
)

// tierDays is the account's requests since its tier change, by quota day
// in loc, read from its attempts (SQLite keeps them counted by minute,
// tier_counts.go; here each is read: warm-up judges at quota resets only).
func tierDays(ctx context.Context, q querier, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	rows, err := q.Query(ctx, `SELECT claimed_at, coalesce(outcome, ''), coalesce(class, ''), coalesce(error_code, 0)
		FROM attempts WHERE account_id = $1 AND claimed_at >= $2`, id, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer rows.Close()
	var reqs []campaign.TierRequest
	for rows.Next() {
		var (
			r        campaign.TierRequest
			at, code int64
		)
		if err := rows.Scan(&at, &r.Outcome, &r.Class, &code); err != nil {
			return nil, fmt.Errorf("read requests: %w", err)
		}
		r.At, r.ErrorCode = fromNanos(at), int(code)
		reqs = append(reqs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	days := campaign.DaysOf(reqs, loc)
	slices.SortFunc(days, func(a, b campaign.DayStats) int { return cmp.Compare(a.Day, b.Day) })
	return days, nil
}
