package campaign

import (
	"errors"
	"testing"
	"time"
)

// TestZonesComparedByRules: WASEND_TZ names the database's zone of quota
// days when its offsets agree with it, whatever the name. Offsets are
// compared from 1980 to 2100: Europe/Paris and Europe/Berlin have kept
// the same rules since before then (CET with EU summer time), so their
// quota days start at the same instants and either may be asked for; a
// zone whose offsets differ at any instant of the span is another zone.
func TestZonesComparedByRules(t *testing.T) {
	load := func(name string) *time.Location {
		t.Helper()
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("no zone data for %s: %v", name, err)
		}
		return loc
	}
	tests := []struct {
		stored, requested string
		same              bool
	}{
		{"Etc/UTC", "UTC", true},
		{"UTC", "Etc/UTC", true},
		{"UTC", "Zulu", true},
		{"Etc/UTC", "Etc/Zulu", true},
		{"UTC", "Etc/GMT", true}, // never an offset but 0
		{"Europe/Berlin", "Europe/Paris", true},
		{"Europe/Berlin", "Europe/Berlin", true},
		{"US/Eastern", "America/New_York", true},
		{"UTC", "Europe/London", false},           // summer time
		{"Europe/Berlin", "Europe/London", false}, // an hour apart
		{"Europe/Berlin", "Africa/Lagos", false},  // CET's offset, no summer time
		{"America/New_York", "America/Chicago", false},
		{"Asia/Kolkata", "Asia/Colombo", false}, // same offset now, not since 1980
	}
	for _, tt := range tests {
		t.Run(tt.stored+" "+tt.requested, func(t *testing.T) {
			requested := load(tt.requested)
			_, mismatch, err := QuotaZone(load(tt.stored).String(), requested)
			if err != nil {
				t.Fatal(err)
			}
			if got := mismatch == nil; got != tt.same {
				t.Errorf("WASEND_TZ=%s on a database of %s: mismatch %v, want same zone %v", tt.requested, tt.stored, mismatch, tt.same)
			}
		})
	}
}

// TestQuotaDaysMoveForward: a reset opens today only when the account's
// quota day is behind it; forced, it zeroes the count but keeps a day that
// is ahead (a clock set back).
func TestQuotaDaysMoveForward(t *testing.T) {
	tests := []struct {
		day, today         string
		force              bool
		next               string
		wantReset, wantBeh bool
	}{
		{"2026-03-01", "2026-03-02", false, "2026-03-02", true, false},
		{"2026-03-02", "2026-03-02", false, "2026-03-02", false, false},
		{"2026-03-02", "2026-03-02", true, "2026-03-02", true, false},
		{"2026-03-03", "2026-03-02", false, "2026-03-03", false, true},
		{"2026-03-03", "2026-03-02", true, "2026-03-03", true, true},
	}
	for _, tt := range tests {
		next, reset, behind := NextResetDay(tt.day, tt.today, tt.force)
		if next != tt.next || reset != tt.wantReset || behind != tt.wantBeh {
			t.Errorf("NextResetDay(%s, %s, %v) = %s, %v, %v; want %s, %v, %v", tt.day, tt.today, tt.force,
				next, reset, behind, tt.next, tt.wantReset, tt.wantBeh)
		}
	}
}

// TestQuotaZoneNames: only IANA names fix a zone of quota days.
func TestQuotaZoneNames(t *testing.T) {
	for _, name := range []string{"", "Local", "Mars/Olympus"} {
		if _, err := LoadQuotaZone(name); !errors.Is(err, ErrUnknownZone) {
			t.Errorf("LoadQuotaZone(%q) = %v, want ErrUnknownZone", name, err)
		}
	}
	if _, err := LoadQuotaZone("Europe/Berlin"); err != nil {
		t.Errorf("LoadQuotaZone(Europe/Berlin) = %v", err)
	}
}
