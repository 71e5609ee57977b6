package campaign

import (
	"fmt"
	"strings"
	"time"
)

// ParseAt reads a start time as an operator writes it: "+2h" (from now),
// "2026-12-01T09:00" or "2026-12-01 09:00" (a wall clock in loc), or RFC
// 3339 with its own offset.
func ParseAt(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
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
	return time.Time{}, fmt.Errorf("%q: want +DURATION (+2h), a local time (2026-12-01T09:00) or RFC 3339 (2026-12-01T09:00:00+01:00)", s)
}
