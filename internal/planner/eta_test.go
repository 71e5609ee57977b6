package planner

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// status is an account as the store reports it at `at`: a tier's limits,
// a full bucket, used sends today.
func status(name, tier string, used int, at time.Time) campaign.AccountStatus {
	l := campaign.DefaultTiers[tier]
	return campaign.AccountStatus{Account: campaign.Account{Name: name, Tier: tier}, Limits: l,
		Tokens: float64(l.Burst), At: at, UsedToday: used}
}

// TestETAFinishes holds the one estimate every surface shows to the cases
// that misled (issue 26): a campaign bound by daily caps for days, one
// scheduled (--at) for tomorrow, one whose rows wait for a retry time, one
// held by its send window. The clock is t0's day: Monday 2 March 2026.
func TestETAFinishes(t *testing.T) {
	evening := time.Date(2026, 3, 2, 19, 0, 0, 0, time.UTC)
	tomorrow9 := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	three := func(used int) []campaign.AccountStatus {
		return []campaign.AccountStatus{status("new", campaign.TierNew, used, evening),
			status("warm", campaign.TierWarm, used, evening), status("active", campaign.TierActive, used, evening)}
	}
	tests := []struct {
		name       string
		open       Open
		accts      []campaign.AccountStatus
		wantBegin  time.Time
		wantFinish time.Time
		wantResets int
	}{{
		// 500 a day over the three tiers (50 + 150 + 300): 5,000 take this
		// evening's 500 and nine more days; the active account's 300th goes
		// last, 15 at once and 285 × 5 s after midnight.
		name:       "caps: days, not minutes",
		open:       Open{Messages: 5000},
		accts:      three(0),
		wantBegin:  evening,
		wantFinish: time.Date(2026, 3, 11, 0, 23, 45, 0, time.UTC),
		wantResets: 9,
	}, {
		// Scheduled for 09:00 tomorrow, every cap used up today: nothing
		// before 09:00, then the active account's burst and one every 5 s
		// (it fills its bucket meanwhile; the quota day started again).
		name:       "scheduled for tomorrow",
		open:       Open{Messages: 40, Begin: tomorrow9},
		accts:      []campaign.AccountStatus{status("active", campaign.TierActive, 300, evening)},
		wantBegin:  tomorrow9,
		wantFinish: tomorrow9.Add(25 * 5 * time.Second),
		wantResets: 1,
	}, {
		name:       "a start already past is now",
		open:       Open{Messages: 20, Begin: evening.Add(-time.Hour)},
		accts:      []campaign.AccountStatus{status("active", campaign.TierActive, 0, evening)},
		wantBegin:  evening,
		wantFinish: evening.Add(25 * time.Second),
	}, {
		// Rows wait for a retry time an hour ahead: the bucket is full by
		// then.
		name:       "retries due in an hour",
		open:       Open{Messages: 20, Begin: evening.Add(time.Hour)},
		accts:      []campaign.AccountStatus{status("active", campaign.TierActive, 0, evening)},
		wantBegin:  evening.Add(time.Hour),
		wantFinish: evening.Add(time.Hour + 25*time.Second),
	}, {
		// 09:00-17:00 in Berlin opens at 08:00 UTC tomorrow; the rows with
		// no zone (imported before the window) go at once.
		name: "send window",
		open: Open{Messages: 99, Window: mustWindowT("09:00-17:00"), Groups: []Group{
			{Messages: 5}, {Zones: mustZonesT("Europe/Berlin"), Messages: 20}}},
		accts:      []campaign.AccountStatus{status("active", campaign.TierActive, 0, evening)},
		wantBegin:  evening,
		wantFinish: time.Date(2026, 3, 3, 8, 0, 25, 0, time.UTC),
		wantResets: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ETA(evening, time.UTC, tt.open, Limits{Accounts: tt.accts})
			if err != nil {
				t.Fatal(err)
			}
			if f.Capped {
				t.Fatalf("never: %s", f.Reason)
			}
			if !f.Begin.Equal(tt.wantBegin) || !f.Finish.Equal(tt.wantFinish) || f.QuotaResets != tt.wantResets {
				t.Errorf("begin %v finish %v resets %d, want %v, %v, %d", f.Begin, f.Finish, f.QuotaResets, tt.wantBegin, tt.wantFinish, tt.wantResets)
			}
			if f.Finish.Before(f.Begin) || f.Duration != f.Finish.Sub(evening) {
				t.Errorf("finish %v before its begin %v, or duration %v not from now", f.Finish, f.Begin, f.Duration)
			}
		})
	}
}

func mustZonesT(names string) []*time.Location {
	z, err := campaign.LoadZones(names)
	if err != nil {
		panic(err)
	}
	return z
}

func mustWindowT(hours string) *campaign.Window {
	w, err := campaign.ParseWindow(hours, "")
	if err != nil {
		panic(err)
	}
	return &w
}

func TestGroups(t *testing.T) {
	g, err := Groups(map[string]int{"Europe/Berlin": 3, "": 2, "America/New_York,Europe/Berlin": 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 3 || g[0].Zones != nil || g[0].Messages != 2 || zoneKey(g[1]) != "America/New_York,Europe/Berlin" || zoneKey(g[2]) != "Europe/Berlin" {
		t.Errorf("groups %+v: want the zoneless first, then by names", g)
	}
	if _, err := Groups(map[string]int{"Mars/Olympus": 1}); err == nil {
		t.Error("an unknown zone gave no error")
	}
}
