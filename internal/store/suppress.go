package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/suppresssql"
)

// Suppress lists numbers, all in one transaction, and returns how many were
// not listed before (suppresssql.Suppress).
func (s *Store) Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error) {
	if err := suppresssql.CheckListable(list); err != nil || len(list) == 0 {
		return 0, err
	}
	err = s.write(ctx, func(tx *Tx) (err error) {
		added, err = suppresssql.Suppress(ctx, manageTx{tx}, sqlite, list, s.now())
		return err
	})
	return added, err
}

// Unsuppress takes numbers off the list and returns how many were on it.
func (s *Store) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if len(phones) == 0 {
		return 0, nil
	}
	err = s.write(ctx, func(tx *Tx) (err error) {
		removed, err = suppresssql.Unsuppress(ctx, manageTx{tx}, sqlite, phones)
		return err
	})
	return removed, err
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
	if err := suppresssql.CheckListable(listed); err != nil {
		return err
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

// Pushed takes the numbers ToPush returned, up to seq, out of the outbox
// (suppresssql.Pushed).
func (s *Store) Pushed(ctx context.Context, seq int64) error {
	return s.write(ctx, func(tx *Tx) error { return suppresssql.Pushed(ctx, manageTx{tx}, sqlite, seq) })
}

// PushAll puts the whole list in the outbox (suppresssql.PushAll).
func (s *Store) PushAll(ctx context.Context) (n int, err error) {
	err = s.write(ctx, func(tx *Tx) (err error) { n, err = suppresssql.PushAll(ctx, manageTx{tx}, sqlite); return err })
	return n, err
}
