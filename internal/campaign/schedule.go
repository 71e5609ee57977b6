package campaign

import (
	"fmt"
	"strings"
	"time"
)

// AtForms lists what ParseAt accepts, for help and errors.
const AtForms = "+DURATION (+2h), HH:MM (09:00: the next 09:00), today HH:MM, tomorrow HH:MM, " +
	"a weekday and HH:MM (mon 09:00: the next Monday's, today's if still ahead), " +
	"a date and time (2026-12-01T09:00 or 2026-12-01 09:00), RFC 3339 with its offset (2026-12-01T09:00:00+01:00), or now"

// ParseAt reads a start time as an operator writes it, a wall clock in loc
// unless it carries its own offset: "now"; "+2h" (from now); "09:00" (the next
// 09:00: today's while ahead, else tomorrow's); "today 09:00" (even if
// past: the campaign then starts at once); "tomorrow 09:00"; "mon 09:00"
// or "monday 09:00" (the next such day whose 09:00 is ahead); a date and
// time "2026-12-01T09:00" or "2026-12-01 09:00"; RFC 3339 with its offset.
// Seconds may follow the minutes; case and extra spaces do not matter.
func ParseAt(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.Join(strings.Fields(s), " ")
	if strings.EqualFold(s, "now") {
		return now, nil
	}
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("%q: want a duration after +, like +2h or +90m", s)
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, ok := parseDayClock(strings.ToLower(s), now.In(loc)); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want %s; times without an offset are in %s", s, AtForms, zoneName(loc, now))
}

// parseDayClock reads "[DAY ]HH:MM[:SS]" against now (in the zone meant):
// DAY is today, tomorrow or a weekday; without one, the next such time.
func parseDayClock(s string, now time.Time) (time.Time, bool) {
	day, clock, ok := strings.Cut(s, " ")
	if !ok {
		day, clock = "", s
	}
	var c time.Time
	var err error
	for _, layout := range []string{"15:04", "15:04:05"} {
		if c, err = time.Parse(layout, clock); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, false
	}
	on := func(days int) time.Time {
		y, m, d := now.Date()
		return time.Date(y, m, d+days, c.Hour(), c.Minute(), c.Second(), 0, now.Location())
	}
	switch day {
	case "today":
		return on(0), true
	case "tomorrow":
		return on(1), true
	case "":
		if t := on(0); t.After(now) {
			return t, true
		}
		return on(1), true
	}
	wd, ok := weekdays[day]
	if !ok {
		return time.Time{}, false
	}
	ahead := (int(wd) - int(now.Weekday()) + 7) % 7
	if t := on(ahead); t.After(now) {
		return t, true
	}
	return on(ahead + 7), true
}

var weekdays = func() map[string]time.Weekday {
	m := map[string]time.Weekday{}
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := strings.ToLower(d.String())
		m[name], m[name[:3]] = d, d
	}
	return m
}()

// zoneName names loc for an error: "Local" says nothing to an operator.
func zoneName(loc *time.Location, now time.Time) string {
	if loc == time.Local {
		return "local time (" + now.In(loc).Format("MST") + ")"
	}
	return loc.String()
}
