package campaign

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestDaysOf: requests count on their quota day in the zone given; one
// never sent does not count, a restriction code marks its day.
func TestDaysOf(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := DaysOf([]TierRequest{
		{At: at("2026-03-02T10:00:00Z"), Outcome: "sent"},
		{At: at("2026-03-01T23:30:00Z"), Outcome: "sent"}, // 00:30 on the 2nd in Berlin
		{At: at("2026-03-01T12:00:00Z"), Class: "permanent"},
		{At: at("2026-03-01T12:01:00Z"), Class: "not-sent"},
		{At: at("2026-03-01T12:02:00Z"), Class: "permanent", ErrorCode: 131048},
	}, berlin)
	want := []DayStats{
		{Day: "2026-03-01", Requests: 2, Failed: 2, Restricted: 1},
		{Day: "2026-03-02", Requests: 2, Sent: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DaysOf = %+v\nwant %+v", got, want)
	}
}

// TestDemotion: a restriction demotes at once; a 130429 storm demotes only
// an hour after the last change and past StormShare of StormMinRequests or
// more; other outcomes and the lowest tier never ask for the counts.
func TestDemotion(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	storm := Outcome{ErrorCode: 130429, Throttle: &Throttle{}}
	tests := []struct {
		name              string
		tier              string
		since             time.Duration // before now
		o                 Outcome
		requests, throttl int
		want              string
	}{
		{"restricted", "active", time.Minute, Outcome{Restrict: time.Hour, Error: "131048"}, 0, 0, "warm"},
		{"storm", "active", 2 * time.Hour, storm, 40, 2, "warm"}, // 3 of 40 with this one
		{"storm too soon after a change", "active", 30 * time.Minute, storm, 40, 10, ""},
		{"too few requests", "warm", 2 * time.Hour, storm, StormMinRequests - 1, 10, ""},
		{"under the share", "warm", 2 * time.Hour, storm, 100, 4, ""},
		{"lowest tier", "new", 2 * time.Hour, storm, 100, 50, ""},
		{"another code", "active", 2 * time.Hour, Outcome{ErrorCode: 131056, Throttle: &Throttle{}}, 100, 50, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to, why, err := Demotion(tt.tier, t0.Add(-tt.since), t0, tt.o, func() (int, int, error) {
				return tt.requests, tt.throttl, nil
			})
			if err != nil || to != tt.want || (to != "") != (why != "") {
				t.Errorf("Demotion = %q, %q, %v; want %q", to, why, err, tt.want)
			}
		})
	}
	fail := errors.New("disk")
	if _, _, err := Demotion("active", t0.Add(-2*time.Hour), t0, storm, func() (int, int, error) { return 0, 0, fail }); !errors.Is(err, fail) {
		t.Errorf("Demotion with a failed count = %v, want it", err)
	}
}

func TestAutoTierNote(t *testing.T) {
	for _, tt := range []struct {
		on, added bool
		want      string
	}{
		{true, true, "added, auto-tier on"},
		{false, true, "added, tier kept by hand"},
		{true, false, "auto-tier on"},
		{false, false, "auto-tier off: tier kept by hand"},
	} {
		if got := AutoTierNote(tt.on, tt.added); got != tt.want {
			t.Errorf("AutoTierNote(%v, %v) = %q, want %q", tt.on, tt.added, got, tt.want)
		}
	}
	for d, ok := range map[time.Duration]bool{time.Hour: true, 0: false, -time.Hour: false} {
		if err := CheckPromoteAfter(d); (err == nil) != ok {
			t.Errorf("CheckPromoteAfter(%v) = %v", d, err)
		}
	}
}
