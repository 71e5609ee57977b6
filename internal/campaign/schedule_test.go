package campaign

import (
	"strings"
	"testing"
	"time"
)

func TestParseAt(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{in: "+2h", want: now.Add(2 * time.Hour)},
		{in: "+90m", want: now.Add(90 * time.Minute)},
		{in: "2026-12-01T09:00", want: time.Date(2026, 12, 1, 9, 0, 0, 0, berlin)},
		{in: "2026-12-01 09:00:30", want: time.Date(2026, 12, 1, 9, 0, 30, 0, berlin)},
		{in: "2026-12-01T09:00:00-05:00", want: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)},
		{in: "+-2h", wantErr: true},
		{in: "+2", wantErr: true},
		{in: "tomorrow", wantErr: true},
		{in: "2026-13-01T09:00", wantErr: true},
	} {
		got, err := ParseAt(tc.in, now, berlin)
		if (err != nil) != tc.wantErr || !got.Equal(tc.want) {
			t.Errorf("ParseAt(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestParseAtDayClock: the wall-clock forms, on a simulated clock, in the
// zone given. Now is Monday 2026-11-30 12:00 in Berlin (11:00 UTC).
func TestParseAtDayClock(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, berlin)
	on := func(day, h, m, s int) time.Time { return time.Date(2026, 11, day, h, m, s, 0, berlin) }
	for _, tc := range []struct {
		in   string
		loc  *time.Location
		want time.Time
	}{
		{in: "13:00", want: on(30, 13, 0, 0)},              // still ahead today
		{in: "09:00", want: on(31, 9, 0, 0)},               // past: tomorrow's (Dec 1)
		{in: "12:00", want: on(31, 12, 0, 0)},              // now is not ahead
		{in: "9:05:30", want: on(31, 9, 5, 30)},            // one-digit hour, seconds
		{in: "today 09:00", want: on(30, 9, 0, 0)},         // past, as asked: starts at once
		{in: "Today 18:30", want: on(30, 18, 30, 0)},       // case
		{in: "tomorrow 09:00", want: on(31, 9, 0, 0)},      // Dec 1
		{in: "  tomorrow   09:00 ", want: on(31, 9, 0, 0)}, // spaces
		{in: "mon 13:00", want: on(30, 13, 0, 0)},          // today, still ahead
		{in: "monday 09:00", want: on(37, 9, 0, 0)},        // today's is past: next week
		{in: "tue 09:00", want: on(31, 9, 0, 0)},           // tomorrow
		{in: "Sunday 23:59", want: on(36, 23, 59, 0)},      // Dec 6
		{in: "fri 08:00", want: on(34, 8, 0, 0)},           // Dec 4
		// Another zone: 06:00 in Berlin is 00:00 in New York, still Monday.
		{in: "09:00", loc: newYork, want: time.Date(2026, 11, 30, 9, 0, 0, 0, newYork)},
		{in: "tomorrow 09:00", loc: newYork, want: time.Date(2026, 12, 1, 9, 0, 0, 0, newYork)},
		{in: "tue 09:00", loc: newYork, want: time.Date(2026, 12, 1, 9, 0, 0, 0, newYork)},
		{in: "now", want: now},
	} {
		loc := tc.loc
		if loc == nil {
			loc = berlin
		}
		got, err := ParseAt(tc.in, now, loc)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseAt(%q) in %v = %v, %v; want %v", tc.in, loc, got, err, tc.want)
		}
	}
}

// A daylight-saving change between now and the start: the wall clock is
// kept, not the distance (Berlin goes to summer time on 2027-03-28).
func TestParseAtAcrossDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2027, 3, 27, 12, 0, 0, 0, berlin)
	got, err := ParseAt("tomorrow 09:00", now, berlin)
	if want := time.Date(2027, 3, 28, 7, 0, 0, 0, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("tomorrow 09:00 across the change = %v, %v; want %v (09:00 CEST)", got, err, want)
	}
}

// A form that is not accepted says which are, and in which zone.
func TestParseAtError(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, berlin)
	for _, in := range []string{"tomorrow", "25:00", "9", "next monday 09:00", "someday 09:00", "today", "09:00 tomorrow", "mon 9"} {
		_, err := ParseAt(in, now, berlin)
		if err == nil {
			t.Errorf("ParseAt(%q) accepted", in)
			continue
		}
		for _, want := range []string{"+2h", "09:00", "tomorrow HH:MM", "mon 09:00", "2026-12-01T09:00", "RFC 3339", "Europe/Berlin"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseAt(%q) error %q does not name %q", in, err, want)
			}
		}
	}
}
