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
