package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
)

// Limits shared through gates (--limits), as on SQLite: hosts on one
// Postgres share its limits without them, but a database may still share
// with others (another Postgres, SQLite hosts) through Redis. The
// database is one host there, whichever of its processes claims.

// ShareLimits makes every claim from now on ask g (the claim's shared
// path), this database being one host among those sharing.
func (s *Store) ShareLimits(ctx context.Context, g driver.Gates, unavailable func(error) bool) error {
	id, err := s.limitsHost(ctx)
	if err != nil {
		return err
	}
	s.shared = &driver.SharedLimits{Gates: g, Unavailable: unavailable, Host: id}
	return nil
}

// limitsHost is the database's id among the hosts sharing limits, made the
// first time any of its processes asks.
func (s *Store) limitsHost(ctx context.Context) (string, error) {
	b := make([]byte, 8)
	rand.Read(b)
	if _, err := s.pool.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
		claimsql.HostKey, hex.EncodeToString(b)); err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	id, err := s.setting(ctx, s.pool, claimsql.HostKey)
	if err != nil {
		return "", fmt.Errorf("host id for the shared limits: %w", err)
	}
	return id, nil
}

// HostPart is this database's part of portfolio's lost quota day on today,
// as this host among those sharing limits: what a forced quota reset
// rebuilds the day from.
func (s *Store) HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error) {
	host, err := s.limitsHost(ctx)
	if err != nil {
		return limits.RebuildRequest{}, err
	}
	return claimsql.New(sqlTx{s.pool}, postgres).HostPart(ctx, host, portfolio, today, s.now())
}
