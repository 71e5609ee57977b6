package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestWhatIf: the what-ifs are the plans they name — the base, the base
// without its send window, and one more account of each tier, in order.
func TestWhatIf(t *testing.T) {
	in := Input{Start: t0, Location: time.UTC, Messages: 120, Accounts: []AccountState{tierAccount("a", campaign.TierNew, t0)}}
	tiers := []campaign.Tier{
		{Name: campaign.TierNew, Limits: campaign.DefaultTiers[campaign.TierNew]},
		{Name: campaign.TierActive, Limits: campaign.DefaultTiers[campaign.TierActive]},
	}
	nineToFive := &campaign.Window{From: 9 * 60, To: 17 * 60, Days: campaign.EveryDay}
	tests := []struct {
		name   string
		window *campaign.Window
		zones  map[string]int
	}{
		{name: "no window"},
		{name: "window over two zones", window: nineToFive, zones: map[string]int{"Europe/Berlin": 70, "America/New_York": 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WhatIf(in, tc.window, tc.zones, tiers)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			if tc.window != nil {
				plain, err := Plan(in)
				if err != nil {
					t.Fatal(err)
				}
				if got.WithoutWindow == nil || got.WithoutWindow.Finish != plain.Finish {
					t.Errorf("without the window: %+v, want finish %v", got.WithoutWindow, plain.Finish)
				}
				berlin, _ := time.LoadLocation("Europe/Berlin")
				york, _ := time.LoadLocation("America/New_York")
				// Sorted by zone names, whatever the map's order.
				want.Window, want.Groups = tc.window, []Group{{Zones: []*time.Location{york}, Messages: 50}, {Zones: []*time.Location{berlin}, Messages: 70}}
			} else if got.WithoutWindow != nil {
				t.Errorf("without a window: WithoutWindow %+v, want nil", got.WithoutWindow)
			}
			base, err := Plan(want)
			if err != nil {
				t.Fatal(err)
			}
			if got.Base.Finish != base.Finish || got.Base.QuotaResets != base.QuotaResets {
				t.Errorf("base finishes %v after %d resets, want %v after %d", got.Base.Finish, got.Base.QuotaResets, base.Finish, base.QuotaResets)
			}
			if len(got.OneMore) != len(tiers) {
				t.Fatalf("%d what-ifs of one more account, want %d", len(got.OneMore), len(tiers))
			}
			for i, tr := range tiers {
				more, err := Plan(WithExtra(want, tr.Name, tr.Limits))
				if err != nil {
					t.Fatal(err)
				}
				if m := got.OneMore[i]; m.Tier != tr.Name || m.Finish != more.Finish {
					t.Errorf("one more %s: %s finishing %v, want %v", tr.Name, m.Tier, m.Finish, more.Finish)
				}
			}
		})
	}
}

func TestWhatIfBadZone(t *testing.T) {
	in := Input{Start: t0, Location: time.UTC, Messages: 1, Accounts: []AccountState{tierAccount("a", campaign.TierNew, t0)}}
	w := &campaign.Window{From: 9 * 60, To: 17 * 60, Days: campaign.EveryDay}
	_, err := WhatIf(in, w, map[string]int{"Not/AZone": 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "Not/AZone") {
		t.Errorf("err %v, want one naming the zone", err)
	}
}
