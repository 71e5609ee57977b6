package planner

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

func mustZones(t *testing.T, names string) []*time.Location {
	t.Helper()
	z, err := campaign.LoadZones(names)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func mustWindow(t *testing.T, hours, days string) *campaign.Window {
	t.Helper()
	w, err := campaign.ParseWindow(hours, days)
	if err != nil {
		t.Fatal(err)
	}
	return &w
}

// TestPlanWithWindow: t0 is Monday 10:00 UTC — 11:00 in Berlin, 05:00 in
// New York. One account sends one message a second (burst 1).
func TestPlanWithWindow(t *testing.T) {
	berlin, ny := mustZones(t, "Europe/Berlin"), mustZones(t, "America/New_York")
	acct := func() []AccountState { return []AccountState{account("a", 1, 1, 100000, t0)} }
	tests := []struct {
		name       string
		window     *campaign.Window
		groups     []Group
		wantFinish time.Time
		wantReason string
	}{{
		name: "inside the window: as without one",
		// 11:00-12:00 Berlin is open from the start: 100 messages, 99 s.
		window: mustWindow(t, "09:00-20:00", ""), groups: []Group{{berlin, 100}},
		wantFinish: t0.Add(99 * time.Second),
	}, {
		name: "the window closes and opens the next day",
		// Open until 11:01 Berlin: 60 go (10:00:00-10:00:59 UTC), the other
		// 40 from 10:00 UTC the next day, one a second (39 s).
		window: mustWindow(t, "09:00-11:01", ""), groups: []Group{{berlin, 100}},
		wantFinish: time.Date(2026, 3, 3, 8, 0, 39, 0, time.UTC),
	}, {
		name: "the closed group does not hold the open one back",
		// New York opens at 14:00 UTC: Berlin's 10 go at once, New York's
		// 10 from 14:00 UTC (the bucket full by then: one at once, then one
		// a second).
		window: mustWindow(t, "09:00-20:00", ""), groups: []Group{{ny, 10}, {berlin, 10}},
		wantFinish: time.Date(2026, 3, 2, 14, 0, 9, 0, time.UTC),
	}, {
		name: "weekend",
		// Friday-only from Monday: the first opening is Friday 09:00
		// Berlin, 08:00 UTC.
		window: mustWindow(t, "09:00-20:00", "fri"), groups: []Group{{berlin, 2}},
		wantFinish: time.Date(2026, 3, 6, 8, 0, 1, 0, time.UTC),
	}, {
		name:   "never",
		window: mustWindow(t, "09:00-10:00", ""), groups: []Group{{append(mustZones(t, "Europe/Berlin"), mustZones(t, "Pacific/Kiritimati")...), 5}},
		wantReason: "the send window never opens for the recipients left",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			for _, g := range tt.groups {
				n += g.Messages
			}
			f := mustPlan(t, Input{Start: t0, Location: time.UTC, Messages: n, Accounts: acct(), Window: tt.window, Groups: tt.groups})
			if tt.wantReason != "" {
				if !f.Capped || f.Reason != tt.wantReason {
					t.Fatalf("forecast %+v, want never: %s", f, tt.wantReason)
				}
				return
			}
			if f.Capped || !f.Finish.Equal(tt.wantFinish) || f.PerAccount[0].Sent != n {
				t.Fatalf("finish %v (capped %v: %s), sent %d; want %v", f.Finish.UTC(), f.Capped, f.Reason, f.PerAccount[0].Sent, tt.wantFinish)
			}
		})
	}
}
