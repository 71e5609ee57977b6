package campaign

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	// The zone database is built in, so a machine without one (a bare
	// container) finds every recipient's zone all the same.
	_ "time/tzdata"
)

// Window is a daily send window in each recipient's own time zone: a row
// is sent only while the window is open in every zone of its recipient.
type Window struct {
	// From and To are minutes after local midnight. From > To wraps past
	// midnight (22:00-06:00); such a window belongs to the day it opens.
	From, To int
	// Days has bit 1<<time.Weekday set for each day the window opens.
	Days uint8
}

// EveryDay is a Window.Days with every day set.
const EveryDay uint8 = 1<<7 - 1

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseWindow reads --send-window ("09:00-20:00", "9-20", "22:00-06:00")
// and --days ("mon-fri", "mon,wed,fri", "fri-mon", "" or "all" for every
// day).
func ParseWindow(hours, days string) (Window, error) {
	var w Window
	from, to, ok := strings.Cut(strings.TrimSpace(hours), "-")
	if !ok {
		return w, fmt.Errorf("send window %q: want FROM-TO in 24-hour time, like 09:00-20:00", hours)
	}
	var err error
	if w.From, err = parseClock(from); err != nil {
		return w, fmt.Errorf("send window %q: %w", hours, err)
	}
	if w.To, err = parseClock(to); err != nil {
		return w, fmt.Errorf("send window %q: %w", hours, err)
	}
	if w.From == w.To || w.From == 24*60 {
		return w, fmt.Errorf("send window %q: it must open before it closes", hours)
	}
	if w.Days, err = parseDays(days); err != nil {
		return w, err
	}
	return w, nil
}

func parseClock(s string) (int, error) {
	s = strings.TrimSpace(s)
	h, m, hasMin := strings.Cut(s, ":")
	hh, err := strconv.Atoi(h)
	mm := 0
	if err == nil && hasMin {
		if len(m) != 2 {
			err = errors.New("minutes need two digits")
		} else {
			mm, err = strconv.Atoi(m)
		}
	}
	if err != nil || hh < 0 || mm < 0 || mm > 59 || hh*60+mm > 24*60 {
		return 0, fmt.Errorf("%q is not a time of day (00:00 to 24:00)", s)
	}
	return hh*60 + mm, nil
}

func parseDays(s string) (uint8, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "all" || s == "daily" {
		return EveryDay, nil
	}
	day := func(name string) (int, error) {
		name = strings.TrimSpace(name)
		for i, d := range dayNames {
			// "mon", "monday", "tues": three letters at least, of the name.
			if len(name) >= 3 && strings.HasPrefix(strings.ToLower(time.Weekday(i).String()), name) && name[:3] == d {
				return i, nil
			}
		}
		return 0, fmt.Errorf("days %q: %q is not a day (mon, tue, wed, thu, fri, sat, sun)", s, name)
	}
	var mask uint8
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		first, err := day(a)
		if err != nil {
			return 0, err
		}
		last := first
		if isRange {
			if last, err = day(b); err != nil {
				return 0, err
			}
		}
		for d := first; ; d = (d + 1) % 7 {
			mask |= 1 << d
			if d == last {
				break
			}
		}
	}
	return mask, nil
}

// String is the window as ParseWindow reads it: "09:00-20:00 mon-fri".
func (w Window) String() string {
	clock := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	s := clock(w.From) + "-" + clock(w.To)
	if w.Days == EveryDay {
		return s
	}
	var days []string
	for d := range 7 {
		if w.Days&(1<<d) != 0 {
			days = append(days, dayNames[d])
		}
	}
	return s + " " + strings.Join(days, ",")
}

func (w Window) opens(d time.Weekday) bool { return w.Days&(1<<d) != 0 }

// openIn reports whether the window is open at t in loc.
func (w Window) openIn(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	m, d := lt.Hour()*60+lt.Minute(), lt.Weekday()
	if w.From < w.To {
		return w.opens(d) && m >= w.From && m < w.To
	}
	return (w.opens(d) && m >= w.From) || (w.opens((d+6)%7) && m < w.To)
}

// Open reports whether the window is open at t in every zone.
func (w Window) Open(t time.Time, zones []*time.Location) bool {
	for _, z := range zones {
		if !w.openIn(t, z) {
			return false
		}
	}
	return true
}

// Next returns the first instant at or after t when the window is open in
// every zone, and false when that never happens (zones too far apart for
// a short window). A time the intersection opens is always t or one
// zone's opening, so those are the only candidates.
func (w Window) Next(t time.Time, zones []*time.Location) (time.Time, bool) {
	if w.Open(t, zones) {
		return t, true
	}
	var cands []time.Time
	for _, z := range zones {
		lt := t.In(z)
		for d := -1; d <= 8; d++ {
			// The calendar is counted in UTC: local midnight may not exist
			// (a daylight-saving gap at 00:00), and time.Date would move it
			// into the day before.
			day := time.Date(lt.Year(), lt.Month(), lt.Day()+d, 0, 0, 0, 0, time.UTC)
			if !w.opens(day.Weekday()) {
				continue
			}
			if at := opening(day, w.From, z); at.After(t) {
				cands = append(cands, at)
			}
		}
	}
	slices.SortFunc(cands, func(a, b time.Time) int { return a.Compare(b) })
	for _, c := range cands {
		if w.Open(c, zones) {
			return c.In(t.Location()), true
		}
	}
	return time.Time{}, false
}

// opening is the instant the clock in z first reads minute of day on
// day (a date at UTC midnight). In a daylight-saving gap that skips it,
// that is the first instant after the gap; in an overlap that repeats it,
// its first occurrence. time.Date guarantees neither: it may give an
// instant before a gap (the window then looks shut all day) or the second
// occurrence.
func opening(day time.Time, minute int, z *time.Location) time.Time {
	wall := day.Add(time.Duration(minute) * time.Minute) // the wanted clock reading, as if in UTC
	at := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), 0, 0, z)
	switch reads := clock(at); {
	case reads.After(wall): // at is past a gap: the gap ends when at's offset begins
		start, _ := at.ZoneBounds()
		return start
	case reads.Before(wall): // at is before a gap: it ends when at's offset does
		_, end := at.ZoneBounds()
		return end
	}
	// An overlap: the clock read the same under the offset before.
	start, _ := at.ZoneBounds()
	if start.IsZero() {
		return at
	}
	_, before := start.Add(-time.Nanosecond).Zone()
	if first := wall.Add(-time.Duration(before) * time.Second); first.Before(start) && clock(first.In(z)).Equal(wall) {
		return first
	}
	return at
}

// clock is t's local clock reading as the same reading in UTC.
func clock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

var zoneCache sync.Map // string → []*time.Location

// LoadZones reads a comma-separated list of IANA zone names, as stored
// with each recipient, once per list.
func LoadZones(names string) ([]*time.Location, error) {
	if v, ok := zoneCache.Load(names); ok {
		return v.([]*time.Location), nil
	}
	var out []*time.Location
	for _, n := range strings.Split(names, ",") {
		loc, err := LoadZone(n)
		if err != nil {
			return nil, err
		}
		out = append(out, loc)
	}
	zoneCache.Store(names, out)
	return out, nil
}

// LoadZone reads one IANA zone name ("America/New_York"). "Local" is
// refused: it would be this machine's zone, not the recipient's.
// Zones are read once each: time.LoadLocation parses the zone database
// every time, and an import asks for a zone per row.
func LoadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if v, ok := zoneByName.Load(name); ok {
		return v.(*time.Location), nil
	}
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q: want an IANA name like Europe/Berlin", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: not an IANA time zone name (like Europe/Berlin)", name)
	}
	zoneByName.Store(name, loc)
	return loc, nil
}

var zoneByName sync.Map // string → *time.Location
