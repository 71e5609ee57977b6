package campaign

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Quota days are calendar days in one zone, fixed in the database: the
// store keeps the zone's name, the rules of which zone counts and when a
// day may open are here.

// ZoneMismatchError is a run asking for a zone of quota days other than the
// one fixed in the database: it may not open a quota day.
type ZoneMismatchError struct {
	Requested string // the zone asked for (WASEND_TZ)
	Stored    string // the database's zone
}

func (e *ZoneMismatchError) Error() string {
	return fmt.Sprintf("time zone %s is not the zone of quota days fixed in the database, %s", e.Requested, e.Stored)
}

// ErrUnknownZone is a time zone name that is not an IANA zone.
var ErrUnknownZone = errors.New("want an IANA zone name such as Europe/Berlin or UTC")

// QuotaDay is t's quota day in loc, the zone of quota days (time.DateOnly:
// ISO dates order as strings).
func QuotaDay(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// QuotaZone is the zone quota days follow, given the zone fixed in the
// database and the one this process asked for (nil: none). A zone asked
// for with the stored zone's rules is kept as asked (it may be a fixed
// offset LoadLocation can't name); one whose rules differ leaves the
// stored zone in force and comes back as mismatch, which keeps every quota
// day shut.
func QuotaZone(stored string, requested *time.Location) (loc *time.Location, mismatch *ZoneMismatchError, err error) {
	if requested != nil && requested.String() == stored {
		return requested, nil, nil
	}
	loc, err = time.LoadLocation(stored)
	if err != nil {
		return nil, nil, fmt.Errorf("zone of quota days %q in the database: %w", stored, err)
	}
	if requested != nil && !SameQuotaDays(requested, loc) {
		mismatch = &ZoneMismatchError{Requested: requested.String(), Stored: stored}
	}
	return loc, mismatch, nil
}

// NextResetDay is what a quota reset on today does to an account whose
// quota day is day: quota days only move forward, so a day earlier than
// today opens today, and a forced reset zeroes the count without moving
// the day back (behind: today is earlier than day, a clock set back or a
// zone changed to one behind).
func NextResetDay(day, today string, force bool) (next string, reset, behind bool) {
	return max(today, day), today > day || force, today < day
}

// Zones are compared over these years: quota days of the past are already
// counted, and zone data rarely reaches further ahead.
var (
	rulesFrom = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	rulesTo   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// SameQuotaDays reports whether a and b have the same UTC offset at every
// instant from rulesFrom to rulesTo: then their midnights, and so their
// quota days, are the same, whatever the zones are called (UTC, Etc/UTC
// and Zulu; Europe/Berlin and Europe/Paris). It walks the offset changes
// of both.
func SameQuotaDays(a, b *time.Location) bool {
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

// LoadQuotaZone accepts IANA zone names only: "Local" means a different
// zone on every machine, and "" is UTC only by accident.
func LoadQuotaZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q: %w", name, ErrUnknownZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w: %w", name, ErrUnknownZone, err)
	}
	return loc, nil
}

// LocalZoneName is the IANA name of the local zone: $TZ, else the target
// of /etc/localtime, else UTC (Go's local time without either).
func LocalZoneName() string {
	if tz, ok := os.LookupEnv("TZ"); ok {
		tz = strings.TrimPrefix(tz, ":")
		if tz == "" {
			return "UTC"
		}
		if _, err := LoadQuotaZone(tz); err == nil {
			return tz
		}
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.LastIndex(target, "zoneinfo/"); i >= 0 {
			if name := target[i+len("zoneinfo/"):]; name != "" {
				if _, err := LoadQuotaZone(name); err == nil {
					return name
				}
			}
		}
	}
	return "UTC"
}

// QuotaReset is what a reset did to one account.
type QuotaReset struct {
	Account  string
	Day      string // today, in the zone of quota days
	Before   int    // sends counted before the reset
	Reset    bool   // false: already reset today (or Behind) and not forced
	LastDay  string // the account's quota day before
	DailyCap int
	// Behind: today is earlier than the account's quota day (a clock set
	// back, or a zone changed to one behind): the day stays LastDay, even
	// when forced.
	Behind bool
	// Promoted is the account's promotion at this reset (warm-up), if any.
	Promoted *TierChange
}
