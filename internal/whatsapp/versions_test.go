package whatsapp

import (
	"strings"
	"testing"
	"time"
)

func TestVersionsTable(t *testing.T) {
	last := Versions[len(Versions)-1]
	if last.Name != DefaultVersion || !last.Until.IsZero() {
		t.Errorf("newest version %s (until %v); want the default %s with no end yet", last.Name, last.Until, DefaultVersion)
	}
	if prev := Versions[len(Versions)-2]; prev.Name != PreviousVersion {
		t.Errorf("the version before the default is %s; want PreviousVersion %s", prev.Name, PreviousVersion)
	}
	for i := 1; i < len(Versions); i++ {
		a, b := Versions[i-1], Versions[i]
		if !a.Released.Before(b.Released) || (!b.Until.IsZero() && !a.Until.Before(b.Until)) {
			t.Errorf("%s and %s are out of order", a.Name, b.Name)
		}
		if !b.Released.Before(a.Until) {
			t.Errorf("%s ends (%v) before %s is released (%v)", a.Name, a.Until, b.Name, b.Released)
		}
	}
}

func TestVersionEndWarning(t *testing.T) {
	at := func(s string) time.Time { return day(s) }
	tests := []struct {
		version string
		now     time.Time
		want    string // "" for no warning
	}{
		{"", at("2026-12-01"), ""},
		{DefaultVersion, at("2030-01-01"), ""},
		{"v99.0", at("2026-12-01"), ""}, // unknown: doctor says so
		{"v25.0", at("2026-12-01"), ""},
		{"v25.0", at("2028-05-01"), ""}, // 90 days: not yet within
		{"v25.0", at("2028-05-02"), "works until 2028-07-29 (89 days left)"},
		{"v25.0", at("2028-07-29"), "(1 days left)"},
		{"v25.0", at("2028-07-30"), "stopped working after 2028-07-29"},
		{"v22.0", at("2027-04-01"), "works until 2027-05-20 (50 days left)"},
		{"v20.0", at("2026-12-01"), "v20.0 stopped working after 2026-09-24"},
	}
	for _, tt := range tests {
		got := VersionEndWarning(tt.version, tt.now)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("VersionEndWarning(%q, %s) = %q; want %q", tt.version, tt.now.Format(time.DateOnly), got, tt.want)
		}
		if got != "" && !strings.Contains(got, "WASEND_API_VERSION to "+DefaultVersion) {
			t.Errorf("warning %q names no fix", got)
		}
	}
}
