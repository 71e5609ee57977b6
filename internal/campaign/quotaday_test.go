package campaign

import (
	"strings"
	"testing"
	"time"
)

func TestCappedHint(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	for _, tt := range []struct {
		now  time.Time
		loc  *time.Location
		want string
	}{
		{time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC), time.UTC, "from 12-01 00:00 UTC"},
		// 23:30 UTC is already the next day in Berlin.
		{time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), berlin, "from 12-02 00:00 CET"},
		{time.Date(2026, 12, 31, 9, 0, 0, 0, time.UTC), time.UTC, "from 01-01 00:00 UTC"},
	} {
		got := CappedHint(tt.now, tt.loc, "")
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "`wasend quota reset --force`") {
			t.Errorf("CappedHint(%v, %v) = %q, want it to name %q and --force", tt.now, tt.loc, got, tt.want)
		}
		if strings.Contains(got, "continuing after `wasend quota reset`") {
			t.Errorf("the old, untrue hint: %q", got)
		}
	}
}
