package campaign

import (
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
