package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
)

// ShareLimits makes every later claim ask gates — not this database's
// buckets, caps, global bucket, reach, pair gap and sticky numbers — for
// each message's admission. The rows, attempts, windows, priorities and
// the suppression list stay in the database. unavailable tells a failure
// to reach the gates (fail closed: nothing is claimed, the engine waits)
// from other errors. The database's host id, which every claim id starts
// with, is made now the first time.
func (s *Store) ShareLimits(ctx context.Context, g driver.Gates, unavailable func(error) bool) error {
	id, err := limitsHost(ctx, s)
	if err != nil {
		return err
	}
	s.shared = &driver.SharedLimits{Gates: g, Unavailable: unavailable, Host: id}
	return nil
}

// limitsHost is the database's id among the hosts sharing limits, made the
// first time it is asked for.
func limitsHost(ctx context.Context, s *Store) (string, error) {
	var id string
	err := s.write(ctx, func(tx *Tx) error {
		b := make([]byte, 8)
		rand.Read(b)
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)`, claimsql.HostKey, hex.EncodeToString(b)); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, claimsql.HostKey).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	return id, nil
}

// HostPart is this database's part of portfolio's lost quota day on today
// (claimsql's HostPart), as this host among those sharing limits: what a
// forced quota reset rebuilds the day from.
func (s *Store) HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error) {
	host, err := limitsHost(ctx, s)
	if err != nil {
		return limits.RebuildRequest{}, err
	}
	return claimsql.New(sqlTx{s.db}, sqlite).HostPart(ctx, host, portfolio, today, s.now())
}
