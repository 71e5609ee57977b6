package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Suppress lists numbers (a reason given replaces a listed one's) and
// returns how many were new; a number listed by hand goes to the shared
// list only where that list never knew it.
func (s *Store) Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error) {
	for _, sp := range list {
		if err := campaign.CheckListable(sp.Phone); err != nil {
			return 0, err
		}
	}
	if len(list) == 0 {
		return 0, nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		now := nanos(s.now())
		for _, sp := range list {
			tag, err := tx.Exec(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES ($1, $2, $3)
				ON CONFLICT (phone) DO NOTHING`, sp.Phone, sp.Reason, now)
			if err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
			if tag.RowsAffected() > 0 {
				added++
				if _, err := tx.Exec(ctx, `UPDATE suppression_push SET if_unknown = 1 WHERE phone = $1`, sp.Phone); err != nil {
					return fmt.Errorf("suppress %s: %w", sp.Phone, err)
				}
				continue
			}
			if sp.Reason == "" {
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE suppressions SET reason = $1 WHERE phone = $2`, sp.Reason, sp.Phone); err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// Unsuppress takes numbers off the list and returns how many were on it.
func (s *Store) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if len(phones) == 0 {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM suppressions WHERE phone = ANY($1)`, phones)
	if err != nil {
		return 0, fmt.Errorf("unsuppress: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// SuppressedIn is the listed numbers among phones, with their reasons
// (nil when none is).
func (s *Store) SuppressedIn(ctx context.Context, phones []string) (map[string]string, error) {
	if len(phones) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT phone, reason FROM suppressions WHERE phone = ANY($1)`, phones)
	if err != nil {
		return nil, fmt.Errorf("check suppression list: %w", err)
	}
	defer rows.Close()
	var why map[string]string
	for rows.Next() {
		var phone, reason string
		if err := rows.Scan(&phone, &reason); err != nil {
			return nil, fmt.Errorf("check suppression list: %w", err)
		}
		if why == nil {
			why = map[string]string{}
		}
		why[phone] = reason
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check suppression list: %w", err)
	}
	return why, nil
}

// ToPush is the outbox of numbers listed here to push to the shared list,
// oldest first.
func (s *Store) ToPush(ctx context.Context, limit int) ([]driver.Push, error) {
	rows, err := s.pool.Query(ctx, rowscan.PushQuery+`$1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read the suppressions to share: %w", err)
	}
	defer rows.Close()
	return rowscan.Pushes(rows)
}

// Pushed takes the outbox up to seq out: the shared list has them.
func (s *Store) Pushed(ctx context.Context, seq int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM suppression_push WHERE seq <= $1`, seq); err != nil {
		return fmt.Errorf("record the suppressions shared: %w", err)
	}
	return nil
}

// PushAll puts the whole list in the outbox, each number to be listed on
// the shared list if it never knew it; a number already waiting keeps its
// place and kind.
func (s *Store) PushAll(ctx context.Context) (int, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO suppression_push (phone, if_unknown)
		SELECT phone, 1 FROM suppressions ORDER BY created_at, phone ON CONFLICT (phone) DO NOTHING`)
	if err != nil {
		return 0, fmt.Errorf("queue the suppression list for sharing: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
