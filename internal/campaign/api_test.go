package campaign

import (
	"strings"
	"testing"
	"time"
)

func TestParseAPI(t *testing.T) {
	for in, want := range map[string]API{"": APICloud, "cloud": APICloud, "Marketing": APIMarketing, " auto ": APIAuto} {
		if got, err := ParseAPI(in); err != nil || got != want {
			t.Errorf("ParseAPI(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseAPI("mm"); err == nil || !strings.Contains(err.Error(), "cloud, marketing or auto") {
		t.Errorf("ParseAPI(mm) = %v; want an error naming the choices", err)
	}
}

func TestUseMarketing(t *testing.T) {
	tests := []struct {
		api       API
		category  string
		onboarded bool
		want      bool
	}{
		{APICloud, "MARKETING", true, false},
		{APIAuto, "MARKETING", true, true},
		{APIAuto, "marketing", true, true},
		{APIAuto, "MARKETING", false, false},
		{APIAuto, "UTILITY", true, false},
		{APIAuto, "", true, false},
		{APIMarketing, "MARKETING", false, true},
	}
	for _, tt := range tests {
		if got := UseMarketing(tt.api, tt.category, tt.onboarded); got != tt.want {
			t.Errorf("UseMarketing(%s, %q, %v) = %v, want %v", tt.api, tt.category, tt.onboarded, got, tt.want)
		}
	}
}

func TestCheckAPI(t *testing.T) {
	tests := []struct {
		api      API
		category string
		want     string // "" for no error
	}{
		{APIMarketing, "MARKETING", ""},
		{APIMarketing, "UTILITY", "template t is a utility template; the Marketing Messages API sends marketing templates only"},
		{APIMarketing, "", "no known category"},
		{APIAuto, "UTILITY", ""},
		{APICloud, "AUTHENTICATION", ""},
	}
	for _, tt := range tests {
		err := CheckAPI(tt.api, "t", tt.category)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckAPI(%s, %q) = %v; want %q", tt.api, tt.category, err, tt.want)
		}
	}
}

func TestCheckTTL(t *testing.T) {
	tests := []struct {
		ttl      time.Duration
		category string
		want     string
	}{
		{0, "MARKETING", ""},
		{12 * time.Hour, "MARKETING", ""},
		{720 * time.Hour, "MARKETING", ""},
		{11 * time.Hour, "MARKETING", "a marketing template's time-to-live is 12h0m0s to 720h0m0s"},
		{721 * time.Hour, "MARKETING", "720h0m0s"},
		{12 * time.Hour, "UTILITY", ""},
		{13 * time.Hour, "UTILITY", "a utility template's time-to-live is 30s to 12h0m0s"},
		{29 * time.Second, "AUTHENTICATION", "30s to 15m0s"},
		{time.Hour, "", "has no time-to-live range"},
	}
	for _, tt := range tests {
		err := CheckTTL(tt.ttl, tt.category)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckTTL(%v, %q) = %v; want %q", tt.ttl, tt.category, err, tt.want)
		}
	}
}
