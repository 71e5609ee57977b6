package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// inboundPrefix is the settings' key prefix of inbound settings.
const inboundPrefix = rowscan.InboundPrefix

// InboundSettings are the inbound settings set, by key without prefix.
func (s *Store) InboundSettings(ctx context.Context) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT key, value FROM settings WHERE starts_with(key, $1)`, inboundPrefix)
	if err != nil {
		return nil, fmt.Errorf("read inbound settings: %w", err)
	}
	defer rows.Close()
	return rowscan.InboundSettings(rows)
}

// SetInboundSetting stores an inbound setting's value, already checked by
// its parser; unset goes back to the default.
func (s *Store) SetInboundSetting(ctx context.Context, key, value string, unset bool) error {
	var err error
	if unset {
		_, err = s.pool.Exec(ctx, `DELETE FROM settings WHERE key = $1`, inboundPrefix+key)
	} else {
		_, err = s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, inboundPrefix+key, value)
	}
	if err != nil {
		return fmt.Errorf("set %s: %w", key, err)
	}
	return nil
}

// SharedSuppressionsMark is how far ApplySuppressions has applied the
// shared suppression list; the zero mark before the first time.
func (s *Store) SharedSuppressionsMark(ctx context.Context) (driver.SyncMark, error) {
	var m driver.SyncMark
	err := s.pool.QueryRow(ctx, `SELECT epoch, version FROM shared_sync WHERE name = 'suppressions'`).Scan(&m.Epoch, &m.Version)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return m, fmt.Errorf("read how far the shared suppression list was copied: %w", err)
	}
	return m, nil
}

// RecordCheck keeps an account check's finding (empty: it passed).
func (s *Store) RecordCheck(ctx context.Context, accountID int64, f campaign.CheckFinding) error {
	var at int64
	if f.Failed() {
		at = nanos(f.At)
	} else {
		f.Code = 0
	}
	if _, err := s.pool.Exec(ctx, `UPDATE accounts SET check_error = $1, check_code = $2, checked_at = $3 WHERE id = $4`,
		f.Error, f.Code, at, accountID); err != nil {
		return fmt.Errorf("record the check of account %d: %w", accountID, err)
	}
	return nil
}
