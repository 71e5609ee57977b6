package store

import (
	"context"
	"fmt"
	"time"
)

// RequeueUndelivered moves sent rows that no webhook reported delivered
// (or read) and that were sent before the given instant back to pending,
// with a fresh retry budget. Delivered and read rows are never requeued.
func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, requeueUndeliveredSQL,
			s.now().UnixNano(), id, sentBefore.UnixNano())
		if err != nil {
			return fmt.Errorf("requeue undelivered rows: %w", err)
		}
		n, _ = res.RowsAffected()
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}
