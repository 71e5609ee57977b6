package campaign

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	for _, tc := range []struct {
		hours, days string
		want        Window
		wantErr     string
	}{
		{hours: "09:00-20:00", want: Window{From: 540, To: 1200, Days: EveryDay}},
		{hours: "9-20", days: "mon-fri", want: Window{From: 540, To: 1200, Days: 0b0111110}},
		{hours: "22:00-06:30", days: "fri-mon", want: Window{From: 1320, To: 390, Days: 0b1100011}},
		{hours: "00:00-24:00", days: "Sat,sunday", want: Window{From: 0, To: 1440, Days: 0b1000001}},
		{hours: "08:00-12:00", days: "tues", want: Window{From: 480, To: 720, Days: 0b0000100}},
		{hours: "09:00", wantErr: "want FROM-TO"},
		{hours: "09:00-09:00", wantErr: "must open before it closes"},
		{hours: "25:00-26:00", wantErr: `"25:00" is not a time of day`},
		{hours: "09:5-10:00", wantErr: `"09:5" is not a time of day`},
		{hours: "09:00-20:00", days: "mon-fry", wantErr: `"fry" is not a day`},
		{hours: "09:00-20:00", days: "mo", wantErr: `"mo" is not a day`},
	} {
		got, err := ParseWindow(tc.hours, tc.days)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseWindow(%q, %q) = %v, %v; want error %q", tc.hours, tc.days, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseWindow(%q, %q) = %+v, %v; want %+v", tc.hours, tc.days, got, err, tc.want)
		}
	}
	if w, _ := ParseWindow("9-20", "mon-fri"); w.String() != "09:00-20:00 mon,tue,wed,thu,fri" {
		t.Errorf("String = %q", w.String())
	}
}

func zones(t *testing.T, names string) []*time.Location {
	t.Helper()
	z, err := LoadZones(names)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestWindowNext(t *testing.T) {
	weekdays, _ := ParseWindow("09:00-20:00", "mon-fri")
	night, _ := ParseWindow("22:00-02:00", "fri")
	short, _ := ParseWindow("09:00-10:00", "")
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		w      Window
		zones  string
		at     string
		want   string // "" for never
		openAt bool
	}{
		// Tuesday 2026-12-01 07:30 UTC is 08:30 in Berlin: opens at 09:00 there.
		{"before the window", weekdays, "Europe/Berlin", "2026-12-01T07:30:00Z", "2026-12-01T08:00:00Z", false},
		{"inside", weekdays, "Europe/Berlin", "2026-12-01T12:00:00Z", "2026-12-01T12:00:00Z", true},
		{"the close is exclusive", weekdays, "Europe/Berlin", "2026-12-01T19:00:00Z", "2026-12-02T08:00:00Z", false},
		// Friday 20:00 Berlin: next is Monday 09:00.
		{"over the weekend", weekdays, "Europe/Berlin", "2026-12-04T19:00:00Z", "2026-12-07T08:00:00Z", false},
		// New York and Los Angeles: open when both are, from 09:00 in LA.
		{"two zones", weekdays, "America/New_York,America/Los_Angeles", "2026-12-01T14:30:00Z", "2026-12-01T17:00:00Z", false},
		{"two zones open", weekdays, "America/New_York,America/Los_Angeles", "2026-12-01T20:00:00Z", "2026-12-01T20:00:00Z", true},
		// One hour a day in Berlin and in Tokyo never overlap.
		{"never", short, "Europe/Berlin,Asia/Tokyo", "2026-12-01T00:00:00Z", "", false},
		// A window past midnight belongs to the day it opens: Friday 22:00
		// to Saturday 02:00 in Berlin (UTC+1).
		{"past midnight, Saturday 01:00", night, "Europe/Berlin", "2026-12-05T00:00:00Z", "2026-12-05T00:00:00Z", true},
		{"past midnight, Saturday 03:00", night, "Europe/Berlin", "2026-12-05T02:00:00Z", "2026-12-11T21:00:00Z", false},
		// Daylight saving: Berlin moves to UTC+2 on 2027-03-28, so Monday
		// 09:00 is 07:00 UTC.
		{"after the clocks change", weekdays, "Europe/Berlin", "2027-03-27T12:00:00Z", "2027-03-29T07:00:00Z", false},
	} {
		z := zones(t, tc.zones)
		at := utc(tc.at)
		if got := tc.w.Open(at, z); got != tc.openAt {
			t.Errorf("%s: Open = %v, want %v", tc.name, got, tc.openAt)
		}
		got, ok := tc.w.Next(at, z)
		if tc.want == "" {
			if ok {
				t.Errorf("%s: Next = %v, want never", tc.name, got)
			}
			continue
		}
		if !ok || !got.Equal(utc(tc.want)) {
			t.Errorf("%s: Next = %v, %v; want %s", tc.name, got.UTC(), ok, tc.want)
		}
	}
}

// A window that opens in a daylight-saving gap opens at the first instant
// after it; one that opens in an overlap, at its first occurrence. Neither
// loses its day.
func TestWindowNextDST(t *testing.T) {
	win := func(hours, days string) Window {
		t.Helper()
		w, err := ParseWindow(hours, days)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tc := range []struct {
		name, window, days, zone string
		at, want                 string // RFC 3339, UTC
	}{
		// Berlin springs forward on 2026-03-29 at 02:00 CET to 03:00 CEST
		// (01:00 UTC).
		{"Berlin spring, opens 02:30", "02:30-20:00", "", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29T01:00:00Z"},
		{"Berlin spring, short window", "02:30-03:15", "", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29T01:00:00Z"},
		{"Berlin spring, Sunday only", "02:30-20:00", "sun", "Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-29T01:00:00Z"},
		{"Berlin spring, the window is all gap", "02:00-03:00", "", "Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-30T00:00:00Z"},
		// Berlin falls back on 2026-10-25 at 03:00 CEST to 02:00 CET
		// (01:00 UTC): 02:30 comes first at 00:30 UTC.
		{"Berlin autumn, opens 02:30", "02:30-20:00", "", "Europe/Berlin", "2026-10-24T22:00:00Z", "2026-10-25T00:30:00Z"},
		{"Berlin autumn, opens 02:00", "02:00-02:45", "sun", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-25T00:00:00Z"},
		// New York springs forward on 2026-03-08 at 02:00 EST (07:00 UTC)
		// and falls back on 2026-11-01 at 02:00 EDT (06:00 UTC).
		{"New York spring, opens 02:30", "02:30-20:00", "", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"New York autumn, opens 01:30", "01:30-20:00", "", "America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		// São Paulo sprang forward at midnight: 2018-11-04 00:00 -03 was
		// 01:00 -02 (03:00 UTC); it fell back at midnight on 2019-02-17,
		// repeating 23:00-00:00 of the 16th.
		{"São Paulo midnight gap", "00:00-10:00", "", "America/Sao_Paulo", "2018-11-03T14:00:00Z", "2018-11-04T03:00:00Z"},
		{"São Paulo midnight gap, Sunday only", "00:00-10:00", "sun", "America/Sao_Paulo", "2018-11-03T12:00:00Z", "2018-11-04T03:00:00Z"},
		{"São Paulo midnight overlap", "23:30-06:00", "", "America/Sao_Paulo", "2019-02-16T12:00:00Z", "2019-02-17T01:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := win(tc.window, tc.days)
			z := zones(t, tc.zone)
			at, err := time.Parse(time.RFC3339, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			want, err := time.Parse(time.RFC3339, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := w.Next(at, z)
			if !ok || !got.Equal(want) {
				t.Errorf("Next = %v (%v), %v; want %v (%v)", got.UTC(), got.In(z[0]), ok, want, want.In(z[0]))
			}
			if !w.Open(want, z) || w.Open(want.Add(-time.Nanosecond), z) {
				t.Errorf("Open does not agree: it should open at %v", want.In(z[0]))
			}
		})
	}
}

func TestLoadZones(t *testing.T) {
	if _, err := LoadZones("Europe/Berlin,America/New_York"); err != nil {
		t.Error(err)
	}
	// Each zone is read once: an import asks for one per row.
	a, _ := LoadZone("Asia/Kolkata")
	b, _ := LoadZone(" Asia/Kolkata")
	if a == nil || a != b {
		t.Errorf("LoadZone read the zone again: %p, %p", a, b)
	}
	for _, bad := range []string{"Mars/Olympus", "Local", "", "Europe/Berlin,"} {
		if _, err := LoadZones(bad); err == nil {
			t.Errorf("LoadZones(%q) accepted", bad)
		}
	}
}
