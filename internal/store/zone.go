package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// zoneKey is the setting that holds the zone of quota days.
const zoneKey = "timezone"

// quotaZone is the zone of quota days fixed in the database, and whether
// the zone this process asked for disagrees (then no quota day opens).
type quotaZone struct {
	loc     *time.Location
	zoneErr *campaign.ZoneMismatchError
}

// fixZone reads the zone of quota days, storing the one asked for (or the
// local zone's name) when the database has none yet. A zone asked for that
// disagrees is remembered, for ResetQuota to refuse; everything else
// follows the stored zone.
func fixZone(ctx context.Context, s *Store, requested *time.Location) error {
	stored, err := s.setting(ctx, zoneKey)
	if err != nil {
		return err
	}
	want := campaign.LocalZoneName()
	if requested != nil {
		want = requested.String()
	}
	if stored == "" {
		// INSERT OR IGNORE: when two processes race, the first one wins
		// and both read its zone back.
		if err := s.write(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)`, zoneKey, want)
			return err
		}); err != nil {
			return fmt.Errorf("fix the zone of quota days: %w", err)
		}
		if stored, err = s.setting(ctx, zoneKey); err != nil {
			return err
		}
	}
	s.loc, s.zoneErr, err = campaign.QuotaZone(stored, requested)
	return err
}

func (c *conn) setting(ctx context.Context, key string) (string, error) {
	var v string
	err := c.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, nil
}

// QuotaDayOpens is nil when this store may open quota days, or the
// *ZoneMismatchError that keeps it from opening any (see ResetQuota).
func (z *quotaZone) QuotaDayOpens() error {
	if z.zoneErr != nil {
		return z.zoneErr
	}
	return nil
}

// Location is the zone of quota days fixed in the database.
func (z *quotaZone) Location() *time.Location { return z.loc }

// SetTimezone changes the zone of quota days to the IANA zone name and
// returns the previous one. Quota days still only move forward: after a
// change to a zone behind the old one, the current day lasts until the new
// zone's calendar passes it.
func (s *Store) SetTimezone(ctx context.Context, name string) (old string, err error) {
	loc, err := campaign.LoadQuotaZone(name)
	if err != nil {
		return "", err
	}
	err = s.write(ctx, func(tx *Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, zoneKey).Scan(&old); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read setting %s: %w", zoneKey, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, zoneKey, name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("set the zone of quota days: %w", err)
	}
	s.loc, s.zoneErr = loc, nil
	return old, nil
}
