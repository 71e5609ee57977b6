package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// ErrNoZones is returned when a send window is set on a campaign imported
// without one: its rows have no time zones to judge the window by.
var ErrNoZones = errors.New("no time zones stored")

// SetSchedule changes when a campaign may send: a StartAt other than the
// stored one moves its start (and forgets a start already made, so the
// validity counts from the new one), unless it comes from the same
// relative --at (StartArg) as the stored one; an ExpireAfter other than the stored
// one replaces its validity; a Window replaces the send window of a
// campaign imported with one. Zero fields, and fields equal to the stored
// ones, are left as they are: running the same command again changes
// nothing, and never restarts the validity. DefaultTZ counts at import
// only.
func (s *Store) SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) error {
	return s.write(ctx, func(tx *Tx) error {
		if err := refuseCancelled(ctx, tx, id); err != nil {
			return err
		}
		var (
			startAt  sql.NullInt64
			startArg string
			expire   int64
		)
		if err := tx.QueryRowContext(ctx, `SELECT start_at, start_arg, expire_after FROM campaigns WHERE id = ?`, id).
			Scan(&startAt, &startArg, &expire); err != nil {
			return fmt.Errorf("read campaign %d: %w", id, err)
		}
		newStart := !sc.StartAt.IsZero() && (!startAt.Valid || startAt.Int64 != sc.StartAt.UnixNano()) &&
			(sc.StartArg == "" || sc.StartArg != startArg)
		if newStart {
			if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET start_at = ?, start_arg = ?, began_at = NULL WHERE id = ?`,
				sc.StartAt.UnixNano(), sc.StartArg, id); err != nil {
				return fmt.Errorf("schedule campaign %d: %w", id, err)
			}
		}
		if w := sc.Window; w != nil {
			var had bool
			if err := tx.QueryRowContext(ctx, `SELECT window_from IS NOT NULL FROM campaigns WHERE id = ?`, id).Scan(&had); err != nil {
				return fmt.Errorf("read campaign %d: %w", id, err)
			}
			if !had {
				return fmt.Errorf("campaign %d was imported without a send window, and its recipients' time zones are found at import: %w",
					id, ErrNoZones)
			}
			f, t, d := windowColumns(w)
			if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET window_from = ?, window_to = ?, window_days = ? WHERE id = ?`,
				f, t, d, id); err != nil {
				return fmt.Errorf("set send window of campaign %d: %w", id, err)
			}
			// Rows held for the old window are judged again by the new one.
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = 0
				WHERE campaign_id = ? AND state = 'pending' AND window_wait = 1`, id); err != nil {
				return fmt.Errorf("set send window of campaign %d: %w", id, err)
			}
		}
		newExpire := sc.ExpireAfter > 0 && int64(sc.ExpireAfter) != expire
		if newExpire {
			if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET expire_after = ? WHERE id = ?`,
				int64(sc.ExpireAfter), id); err != nil {
				return fmt.Errorf("set validity of campaign %d: %w", id, err)
			}
		}
		if newStart || newExpire {
			// The deadline from the start as it now stands: --at, else the
			// first claim once made (NULL until then: that claim fixes it).
			if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET expires_at = CASE WHEN expire_after > 0
				THEN coalesce(start_at, began_at) + expire_after END WHERE id = ?`, id); err != nil {
				return fmt.Errorf("set validity of campaign %d: %w", id, err)
			}
		}
		return nil
	})
}

// begin is the claim's look at the campaign's schedule. Before the start
// it returns a WaitError (WaitScheduled) and claims nothing. The first
// claim after it records the campaign's start, and fixes the deadline of a
// campaign without a --at (one with a --at has it since it was set). Past
// the validity it
// expires every pending row — those waiting for a retry too — and returns
// the deadline otherwise, so a wait for a retry ends no later than it.
//
// Rows in flight at the deadline are let finish: their request may have
// been made. A row that comes back to pending afterwards expires at the
// next claim.
func begin(ctx context.Context, tx *Tx, id int64, now time.Time) (deadline time.Time, w *campaign.Window, err error) {
	var (
		startAt, beganAt, expires sql.NullInt64
		expire                    int64
		wf, wt, wd                sql.NullInt64
	)
	if err := tx.QueryRowContext(ctx, `SELECT start_at, began_at, expire_after, expires_at, window_from, window_to, window_days
		FROM campaigns WHERE id = ?`, id).Scan(&startAt, &beganAt, &expire, &expires, &wf, &wt, &wd); err != nil {
		return time.Time{}, nil, fmt.Errorf("read schedule of campaign %d: %w", id, err)
	}
	w = windowFrom(wf, wt, wd)
	deadline, err = started(ctx, tx, id, now, startAt, beganAt, expires, time.Duration(expire))
	return deadline, w, err
}

func started(ctx context.Context, tx *Tx, id int64, now time.Time, startAt, beganAt, expires sql.NullInt64, expire time.Duration) (deadline time.Time, err error) {
	if startAt.Valid && now.UnixNano() < startAt.Int64 {
		return time.Time{}, &campaign.WaitError{Reason: campaign.WaitScheduled, Until: fromNanos(startAt.Int64)}
	}
	if !beganAt.Valid {
		if expire > 0 && !expires.Valid {
			expires = nullNanos(campaign.Schedule{ExpireAfter: expire}.Deadline(now))
		}
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET began_at = ?, expires_at = ? WHERE id = ?`,
			now.UnixNano(), expires, id); err != nil {
			return time.Time{}, fmt.Errorf("start campaign %d: %w", id, err)
		}
	}
	if expire <= 0 || !expires.Valid {
		return time.Time{}, nil
	}
	deadline = fromNanos(expires.Int64)
	if now.Before(deadline) {
		return deadline, nil
	}
	if err := expirePending(ctx, tx, id, fmt.Sprintf("expired: not sent within %s of the campaign's start", expire), now); err != nil {
		return time.Time{}, err
	}
	return time.Time{}, nil
}

// nullNanos is t in Unix nanoseconds, NULL for the zero time.
func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}
