package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Suppress lists numbers, all in one transaction, and returns how many were
// not listed before. A number already listed keeps the time it was first
// listed; its reason changes only when a non-empty one is given. Phones
// must be normalised to E.164 first: a number written any other way would
// never match an import.
//
// A number newly listed waits to be pushed to the shared list (ToPush) if
// that list has never known it.
func (s *Store) Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error) {
	for _, sp := range list {
		if err := campaign.CheckListable(sp.Phone); err != nil {
			return 0, err
		}
	}
	if len(list) == 0 {
		return 0, nil
	}
	err = s.write(ctx, func(tx *Tx) error {
		added = 0 // write may retry fn after a busy error
		now := nanos(s.now())
		for _, sp := range list {
			res, err := tx.ExecContext(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)
				ON CONFLICT (phone) DO NOTHING`, sp.Phone, sp.Reason, now)
			if err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added++
				// Listed by hand: shared only where the shared list never
				// knew the number (see ToPush).
				if _, err := tx.ExecContext(ctx, `UPDATE suppression_push SET if_unknown = 1 WHERE phone = ?`, sp.Phone); err != nil {
					return fmt.Errorf("suppress %s: %w", sp.Phone, err)
				}
				continue
			}
			if sp.Reason == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE suppressions SET reason = ? WHERE phone = ?`, sp.Reason, sp.Phone); err != nil {
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

// Unsuppress takes numbers off the list in one transaction and returns how
// many were on it.
func (s *Store) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if len(phones) == 0 {
		return 0, nil
	}
	err = s.write(ctx, func(tx *Tx) error {
		removed = 0
		for _, p := range phones {
			res, err := tx.ExecContext(ctx, `DELETE FROM suppressions WHERE phone = ?`, p)
			if err != nil {
				return fmt.Errorf("unsuppress %s: %w", p, err)
			}
			n, _ := res.RowsAffected()
			removed += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// SharedSuppressionsMark is how far ApplySuppressions has applied the
// shared suppression list; the zero mark before the first time.
func (s *Store) SharedSuppressionsMark(ctx context.Context) (driver.SyncMark, error) {
	var m driver.SyncMark
	err := s.db.QueryRowContext(ctx, `SELECT epoch, version FROM shared_sync WHERE name = 'suppressions'`).Scan(&m.Epoch, &m.Version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("read how far the shared suppression list was copied: %w", err)
	}
	return m, nil
}

// ApplySuppressions makes the list agree with the list several hosts
// share, in one transaction with the mark of how far it now has: each of
// listed is on the list with exactly its reason (and needs no push), and
// each of removed is off it — unless this host listed it from an API
// answer or webhook (an opt-out) that is still waiting to be pushed: that
// is newer than the removal, and the push lists it again for every host.
// A number listed here earlier keeps the earlier of the two times. Rows
// that already agree are not written.
func (s *Store) ApplySuppressions(ctx context.Context, listed []campaign.Suppression, removed []string, mark driver.SyncMark) error {
	for _, sp := range listed {
		if err := campaign.CheckListable(sp.Phone); err != nil {
			return err
		}
	}
	return s.write(ctx, func(tx *Tx) error {
		now := s.now()
		for _, sp := range listed {
			at := sp.CreatedAt
			if at.IsZero() {
				at = now
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)
				ON CONFLICT (phone) DO UPDATE SET reason = excluded.reason, created_at = MIN(created_at, excluded.created_at)
				WHERE reason IS NOT excluded.reason OR created_at > excluded.created_at`, sp.Phone, sp.Reason, nanos(at))
			if err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM suppression_push WHERE phone = ?`, sp.Phone); err != nil {
				return fmt.Errorf("suppress %s: %w", sp.Phone, err)
			}
		}
		for _, p := range removed {
			if _, err := tx.ExecContext(ctx, `DELETE FROM suppressions WHERE phone = ?
				AND NOT EXISTS (SELECT 1 FROM suppression_push WHERE phone = ? AND if_unknown = 0)`, p, p); err != nil {
				return fmt.Errorf("unsuppress %s: %w", p, err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shared_sync (name, epoch, version) VALUES ('suppressions', ?, ?)
			ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, version = excluded.version`, mark.Epoch, mark.Version)
		if err != nil {
			return fmt.Errorf("record how far the shared suppression list was copied: %w", err)
		}
		return nil
	})
}

// ToPush returns up to limit numbers waiting to be pushed to the shared
// list, oldest first.
func (s *Store) ToPush(ctx context.Context, limit int) ([]driver.Push, error) {
	rows, err := s.db.QueryContext(ctx, rowscan.PushQuery+`?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read the suppressions to share: %w", err)
	}
	defer rows.Close()
	return rowscan.Pushes(rows)
}

// Pushed takes the numbers ToPush returned, up to seq, out of the outbox:
// the shared list has them. A number listed again since (a later seq)
// stays.
func (s *Store) Pushed(ctx context.Context, seq int64) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM suppression_push WHERE seq <= ?`, seq); err != nil {
			return fmt.Errorf("record the suppressions shared: %w", err)
		}
		return nil
	})
}

// PushAll puts the whole list in the outbox, each number to be listed on
// the shared list if that list has never known it: after the shared list
// was started anew (Redis lost its data), so the hosts fill it again. A
// number already waiting keeps its place and kind.
func (s *Store) PushAll(ctx context.Context) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO suppression_push (phone, if_unknown)
			SELECT phone, 1 FROM suppressions ORDER BY created_at, phone`)
		if err != nil {
			return fmt.Errorf("queue the suppression list for sharing: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}
