package store_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestQuotaDaysOnlyMoveForward: the zone of quota days is fixed in the
// database on first use; a run asking for another zone ($WASEND_TZ) cannot
// open a day, a clock stepped back cannot open one again, and the zone only
// changes through SetTimezone. Each step opens the database afresh, as each
// wasend command does.
func TestQuotaDaysOnlyMoveForward(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wasend.db")
	clk := newFakeClock()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	open := func(loc *time.Location) *store.Store {
		t.Helper()
		st, err := store.Open(t.Context(), path, driver.Options{Now: clk.Now, Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	st := open(time.UTC)
	storetest.MustAccount(t, st, "a", campaign.TierNew, storetest.Limited(100, 100, 5))
	c := storetest.MustCampaign(t, st, "q", 40)
	claim := func(st *store.Store, n int) {
		t.Helper()
		cs, err := claim.New(st).ClaimN(t.Context(), c.ID, "r", clk.Now(), n)
		if err != nil || len(cs) != n {
			t.Fatalf("claimed %d, %v; want %d", len(cs), err, n)
		}
	}
	claim(st, 5)
	day2 := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)

	for _, s := range []struct {
		name      string
		at        time.Time
		loc       *time.Location // the zone asked for; nil: none (no WASEND_TZ)
		setZone   string         // SetTimezone first
		force     bool
		wantErr   bool // a zone mismatch
		wantReset bool
		wantDay   string // the account's quota day after
		claim     int    // claims after the step
	}{
		{name: "cron at UTC midnight", at: day2, loc: nil, wantReset: true, wantDay: "2026-03-03", claim: 5},
		{name: "an hour later with WASEND_TZ=America/New_York: refused", at: day2.Add(time.Hour), loc: ny, wantErr: true, wantDay: "2026-03-03"},
		{name: "forced with the other zone: refused too", at: day2.Add(time.Hour), loc: ny, force: true, wantErr: true, wantDay: "2026-03-03"},
		{name: "without WASEND_TZ the stored zone counts: same day", at: day2.Add(time.Hour), loc: nil, wantDay: "2026-03-03"},
		{name: "a clock stepped back to yesterday: nothing reset", at: day2.Add(-time.Hour), loc: time.UTC, wantDay: "2026-03-03"},
		{name: "forced on a clock stepped back: the count, never the day", at: day2.Add(-time.Hour), loc: time.UTC, force: true, wantReset: true, wantDay: "2026-03-03"},
		{name: "the zone changed deliberately: New York's day is still behind", at: day2.Add(3 * time.Hour), loc: ny, setZone: "America/New_York", wantDay: "2026-03-03", claim: 5},
		{name: "New York's next midnight", at: time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC), loc: ny, wantReset: true, wantDay: "2026-03-04"},
		{name: "and UTC asked for now is refused", at: time.Date(2026, 3, 4, 6, 0, 0, 0, time.UTC), loc: time.UTC, wantErr: true, wantDay: "2026-03-04"},
	} {
		clk.Set(s.at)
		if s.setZone != "" {
			old, err := open(nil).SetTimezone(t.Context(), s.setZone)
			if err != nil || old != "UTC" {
				t.Fatalf("%s: SetTimezone = %q, %v; want the old zone UTC", s.name, old, err)
			}
		}
		st := open(s.loc)
		before := storetest.AccountByName(t, st, "a").UsedToday
		out, err := st.ResetQuota(t.Context(), nil, s.force)
		var zerr *campaign.ZoneMismatchError
		if s.wantErr != errors.As(err, &zerr) {
			t.Fatalf("%s: ResetQuota = %+v, %v; want a zone mismatch: %v", s.name, out, err, s.wantErr)
		}
		if !s.wantErr {
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if len(out) != 1 || out[0].Reset != s.wantReset {
				t.Errorf("%s: %+v, want reset %v", s.name, out, s.wantReset)
			}
		}
		a := storetest.AccountByName(t, st, "a")
		wantUsed := before
		if s.wantReset {
			wantUsed = 0
		}
		if a.QuotaDay != s.wantDay || a.UsedToday != wantUsed {
			t.Errorf("%s: quota day %s used %d, want %s used %d", s.name, a.QuotaDay, a.UsedToday, s.wantDay, wantUsed)
		}
		if s.claim > 0 {
			claim(st, s.claim)
		}
		// The cap is never doubled: a quota day sends at most 5.
		if n := storetest.CountRows(t, st, `SELECT count(*) FROM messages m JOIN accounts a ON a.id = m.account_id
			WHERE m.quota_epoch = a.quota_epoch AND m.state <> 'pending'`); n > 5 {
			t.Errorf("%s: %d sends on the current quota day, cap 5", s.name, n)
		}
	}
}

// TestTimezoneFixedOnFirstUse: a new database takes the zone asked for, or
// the local zone's name; later opens keep it whatever they ask.
func TestTimezoneFixedOnFirstUse(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tz    string // $TZ: the local zone
		first *time.Location
		want  string
	}{
		{"asked for", "", tokyo, "Asia/Tokyo"},
		{"the local zone by name", "Europe/Berlin", nil, "Europe/Berlin"},
		{"the local zone UTC", "UTC", nil, "UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TZ", tc.tz)
			path := filepath.Join(t.TempDir(), "wasend.db")
			for _, loc := range []*time.Location{tc.first, nil, time.UTC} {
				st, err := store.Open(t.Context(), path, driver.Options{Now: newFakeClock().Now, Location: loc})
				if err != nil {
					t.Fatal(err)
				}
				if got := st.Location().String(); got != tc.want {
					t.Errorf("opened asking %v: zone %s, want %s", loc, got, tc.want)
				}
				st.Close()
			}
		})
	}
}

func TestSetTimezoneRejectsUnknownZones(t *testing.T) {
	st := openTest(t, newFakeClock())
	for _, bad := range []string{"", "Mars/Olympus", "Local", "../etc/passwd"} {
		if _, err := st.SetTimezone(t.Context(), bad); !errors.Is(err, campaign.ErrUnknownZone) {
			t.Errorf("SetTimezone(%q) = %v, want ErrUnknownZone", bad, err)
		}
	}
	if got := st.Location().String(); got != "UTC" {
		t.Errorf("zone %s after rejected changes, want UTC", got)
	}
}
