package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/suppresssql"
)

// Suppress lists numbers and returns how many were new
// (suppresssql.Suppress).
func (s *Store) Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error) {
	if err := suppresssql.CheckListable(list); err != nil || len(list) == 0 {
		return 0, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) (err error) {
		added, err = suppresssql.Suppress(ctx, manageTx{tx}, postgres, list, s.now())
		return err
	})
	return added, err
}

// Unsuppress takes numbers off the list and returns how many were on it.
func (s *Store) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if len(phones) == 0 {
		return 0, nil
	}
	return suppresssql.Unsuppress(ctx, manageTx{s.pool}, postgres, phones)
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
	return suppresssql.Pushed(ctx, manageTx{s.pool}, postgres, seq)
}

// PushAll puts the whole list in the outbox (suppresssql.PushAll).
func (s *Store) PushAll(ctx context.Context) (int, error) {
	return suppresssql.PushAll(ctx, manageTx{s.pool}, postgres)
}
