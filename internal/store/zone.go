package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// zoneKey is the setting that holds the zone of quota days.
const zoneKey = "timezone"

// ZoneMismatchError is a run asking for a zone of quota days other than the
// one fixed in the database: it may not open a quota day.
type ZoneMismatchError struct {
	Requested string // the zone asked for (Options.Location)
	Stored    string // the database's zone
}

func (e *ZoneMismatchError) Error() string {
	return fmt.Sprintf("time zone %s is not the zone of quota days fixed in the database, %s", e.Requested, e.Stored)
}

// quotaZone is the zone of quota days fixed in the database, and whether
// the zone this process asked for disagrees (then no quota day opens).
type quotaZone struct {
	loc     *time.Location
	zoneErr *ZoneMismatchError
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
	want := localZoneName()
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
	if requested != nil && requested.String() == stored {
		// As asked: this also keeps a zone LoadLocation can't name (a
		// fixed offset in tests).
		s.loc = requested
		return nil
	}
	loc, err := time.LoadLocation(stored)
	if err != nil {
		return fmt.Errorf("zone of quota days %q in the database: %w", stored, err)
	}
	s.loc = loc
	if requested != nil && !sameRules(requested, loc) {
		s.zoneErr = &ZoneMismatchError{Requested: requested.String(), Stored: stored}
	}
	return nil
}

// Zones are compared over these years: quota days of the past are already
// counted, and zone data rarely reaches further ahead.
var (
	rulesFrom = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	rulesTo   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// sameRules reports whether a and b have the same UTC offset at every
// instant from rulesFrom to rulesTo: then their midnights, and so their
// quota days, are the same, whatever the zones are called (UTC, Etc/UTC
// and Zulu; Europe/Berlin and Europe/Paris). It walks the offset changes
// of both.
func sameRules(a, b *time.Location) bool {
	for t := rulesFrom; t.Before(rulesTo); {
		_, oa := t.In(a).Zone()
		_, ob := t.In(b).Zone()
		if oa != ob {
			return false
		}
		_, endA := t.In(a).ZoneBounds()
		_, endB := t.In(b).ZoneBounds()
		next := endA
		if next.IsZero() || (!endB.IsZero() && endB.Before(next)) {
			next = endB
		}
		if next.IsZero() || !next.After(t) {
			return true // neither changes again
		}
		t = next
	}
	return true
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
	loc, err := loadZone(name)
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

// ErrUnknownZone is a time zone name that is not an IANA zone.
var ErrUnknownZone = errors.New("want an IANA zone name such as Europe/Berlin or UTC")

// loadZone accepts IANA zone names only: "Local" means a different zone on
// every machine, and "" is UTC only by accident.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q: %w", name, ErrUnknownZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w: %w", name, ErrUnknownZone, err)
	}
	return loc, nil
}

// localZoneName is the IANA name of the local zone: $TZ, else the target
// of /etc/localtime, else UTC (Go's local time without either).
func localZoneName() string {
	if tz, ok := os.LookupEnv("TZ"); ok {
		tz = strings.TrimPrefix(tz, ":")
		if tz == "" {
			return "UTC"
		}
		if _, err := loadZone(tz); err == nil {
			return tz
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.LastIndex(target, "zoneinfo/"); i >= 0 {
			if name := target[i+len("zoneinfo/"):]; name != "" {
				if _, err := loadZone(name); err == nil {
					return name
				}
			}
		}
	}
	return "UTC"
}
