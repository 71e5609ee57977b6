package store

import (
	"path/filepath"
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
			load(tt.stored)
			path := filepath.Join(t.TempDir(), "wasend.db")
			st, err := Open(t.Context(), path, Options{Location: load(tt.stored)})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			st, err = Open(t.Context(), path, Options{Location: requested})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.ResetQuota(t.Context(), nil, false)
			if got := err == nil; got != tt.same {
				t.Errorf("WASEND_TZ=%s on a database of %s: quota reset error %v, want same zone %v", tt.requested, tt.stored, err, tt.same)
			}
		})
	}
}
