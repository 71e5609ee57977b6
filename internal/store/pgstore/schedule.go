package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// A campaign's settings the claim reads: its schedule, its share of the
// accounts, its pair gap and its customer service window check (SQLite's
// schedule.go, priority.go, sticky.go, servicewindow.go).

// SetSchedule changes when a campaign may send; zero fields and fields
// equal to the stored ones are left as they are.
func (s *Store) SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := managesql.Changeable(ctx, manageTx{tx}, postgres, id); err != nil {
			return err
		}
		var (
			startAt  *int64
			startArg string
			expire   int64
			had      bool
		)
		if err := tx.QueryRow(ctx, `SELECT start_at, start_arg, expire_after, window_from IS NOT NULL FROM campaigns WHERE id = $1`, id).
			Scan(&startAt, &startArg, &expire, &had); err != nil {
			return fmt.Errorf("read campaign %d: %w", id, err)
		}
		newStart := !sc.StartAt.IsZero() && (startAt == nil || *startAt != sc.StartAt.UnixNano()) &&
			(sc.StartArg == "" || sc.StartArg != startArg)
		if newStart {
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET start_at = $1, start_arg = $2, began_at = NULL WHERE id = $3`,
				sc.StartAt.UnixNano(), sc.StartArg, id); err != nil {
				return fmt.Errorf("schedule campaign %d: %w", id, err)
			}
		}
		if w := sc.Window; w != nil {
			if !had {
				return fmt.Errorf("campaign %d was imported without a send window, and its recipients' time zones are found at import: %w",
					id, driver.ErrNoZones)
			}
			f, t, d := windowColumns(w)
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET window_from = $1, window_to = $2, window_days = $3 WHERE id = $4`,
				f, t, d, id); err != nil {
				return fmt.Errorf("set send window of campaign %d: %w", id, err)
			}
			// Rows held for the old window are judged again by the new one.
			if _, err := tx.Exec(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = 0
				WHERE campaign_id = $1 AND state = 'pending' AND window_wait = 1`, id); err != nil {
				return fmt.Errorf("set send window of campaign %d: %w", id, err)
			}
		}
		newExpire := sc.ExpireAfter > 0 && int64(sc.ExpireAfter) != expire
		if newExpire {
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET expire_after = $1 WHERE id = $2`, int64(sc.ExpireAfter), id); err != nil {
				return fmt.Errorf("set validity of campaign %d: %w", id, err)
			}
		}
		if newStart || newExpire {
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET expires_at = CASE WHEN expire_after > 0
				THEN coalesce(start_at, began_at) + expire_after END WHERE id = $1`, id); err != nil {
				return fmt.Errorf("set validity of campaign %d: %w", id, err)
			}
		}
		return nil
	})
}

// SetShare changes how a campaign shares the accounts, from its next claim.
func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := managesql.Changeable(ctx, manageTx{tx}, postgres, id); err != nil {
			return err
		}
		c, err := rowscan.Campaign(tx.QueryRow(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns WHERE id = $1`, id))
		if err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		sh := ch.Apply(c.Share)
		if err := sh.Validate(); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE campaigns SET priority = $1, weight = $2, borrow = $3 WHERE id = $4`,
			int(sh.Priority), sh.Weight, int64(sh.Borrow), id); err != nil {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		return nil
	})
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for a campaign's claims.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	if gap < 0 {
		return fmt.Errorf("pair gap %v: must not be negative", gap)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE campaigns SET pair_gap = $1 WHERE id = $2`, int64(gap), campaignID); err != nil {
		return fmt.Errorf("set the pair gap of campaign %d: %w", campaignID, err)
	}
	return nil
}

// SetServiceWindow says whether a campaign's rows are checked for an open
// customer service window at each claim.
func (s *Store) SetServiceWindow(ctx context.Context, id int64, on bool) error {
	if _, err := s.pool.Exec(ctx, `UPDATE campaigns SET service_window = $1 WHERE id = $2`, boolInt(on), id); err != nil {
		return fmt.Errorf("set the service window check of campaign %d: %w", id, err)
	}
	return nil
}
