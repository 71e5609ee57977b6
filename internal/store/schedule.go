package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// A campaign's settings changed after its import: when it may send
// (SetSchedule), how it shares the accounts (SetShare), its pair gap.

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
		if err := managesql.Changeable(ctx, manageTx{tx}, sqlite, id); err != nil {
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
					id, driver.ErrNoZones)
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

// SetShare changes how a campaign shares the accounts (`campaign set`),
// taking effect at the next claim of every process sending it.
func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error {
	return s.write(ctx, func(tx *Tx) error {
		if err := managesql.Changeable(ctx, manageTx{tx}, sqlite, id); err != nil {
			return err
		}
		c, err := rowscan.Campaign(tx.QueryRowContext(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = ?`, id))
		if err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		sh := ch.Apply(c.Share)
		if err := sh.Validate(); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET priority = ?, weight = ?, borrow = ? WHERE id = ?`,
			int(sh.Priority), sh.Weight, int64(sh.Borrow), id); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		return nil
	})
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for the claims of a campaign.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	if gap < 0 {
		return fmt.Errorf("pair gap %v: must not be negative", gap)
	}
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET pair_gap = ? WHERE id = ?`, int64(gap), campaignID); err != nil {
			return fmt.Errorf("set the pair gap of campaign %d: %w", campaignID, err)
		}
		return nil
	})
}
