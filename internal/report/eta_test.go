package report

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// TestCampaignETA holds status, list and show (CampaignETA) to the
// planner's ETA on a real database (issue 26): a campaign scheduled for
// tomorrow finishes after its start, counted from now, and one bound by
// its account's daily cap takes days, saying how many quota resets. The
// account is active: 15 at once, one every 5 s, 300 a day; t0 is 14:00.
func TestCampaignETA(t *testing.T) {
	tomorrow9 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		n          int
		start      time.Time
		wantStart  *time.Time
		wantFinish time.Time
		wantResets int
		wantText   string
	}{{
		name: "scheduled for tomorrow", n: 40, start: tomorrow9,
		wantStart: &tomorrow9, wantFinish: tomorrow9.Add(25 * 5 * time.Second), wantResets: 1,
		wantText: "about 19 h 2 min (starts 2026-12-01 09:00 UTC; needs 1 quota reset)",
	}, {
		// 300 today, 300 on each of the next two days, the last 100 on the
		// third: 15 at once, 85 × 5 s.
		name: "daily caps", n: 1000,
		wantFinish: time.Date(2026, 12, 3, 0, 7, 5, 0, time.UTC), wantResets: 3,
		wantText: "about 2 d 10 h (needs 3 quota resets)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, now := seed(t, tt.n)
			if !tt.start.IsZero() {
				if err := st.SetSchedule(ctx, 1, campaign.Schedule{StartAt: tt.start}); err != nil {
					t.Fatal(err)
				}
			}
			r := Reporter{Src: st, Reads: readmodel.New(st), Now: *now, Loc: time.UTC}
			camps, err := r.Campaigns(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.Campaign(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			one, err := r.CampaignETA(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			for what, e := range map[string]*ETA{"status": camps[0].ETA, "show": one} {
				if e == nil || e.Finish == nil {
					t.Fatalf("%s: ETA %+v, want a finish", what, e)
				}
				if (e.Start == nil) != (tt.wantStart == nil) || e.Start != nil && !e.Start.Equal(*tt.wantStart) {
					t.Errorf("%s: start %v, want %v", what, e.Start, tt.wantStart)
				}
				if !e.Finish.Equal(tt.wantFinish) || e.QuotaResets != tt.wantResets || e.Text != tt.wantText {
					t.Errorf("%s: finish %v, %d resets, %q; want %v, %d, %q", what, e.Finish, e.QuotaResets, e.Text, tt.wantFinish, tt.wantResets, tt.wantText)
				}
				if left, _ := e.Left(); left != e.Finish.Sub(*now) || (e.Start != nil && e.Finish.Before(*e.Start)) {
					t.Errorf("%s: %v left, finish %v: not counted from now %v, or before its start", what, left, e.Finish, *now)
				}
			}
		})
	}
}

// A campaign nothing sends has no ETA; one that can never finish says why.
func TestCampaignETANever(t *testing.T) {
	ctx := context.Background()
	st, now := seed(t, 3)
	zero := 0
	if _, err := st.UpdateAccount(ctx, "main-01", campaign.AccountChange{DailyCap: &zero}); err != nil {
		t.Fatal(err)
	}
	r := Reporter{Src: st, Reads: readmodel.New(st), Now: *now, Loc: time.UTC}
	c, err := st.Campaign(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.CampaignETA(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if e == nil || e.Finish != nil || e.Never == "" || !strings.HasPrefix(e.Text, "never with the current limits: ") {
		t.Errorf("ETA %+v, want never, with why", e)
	}
}

// TestCampaignETAWindow: the ETA counts a campaign's send window in each
// recipient's zone, from the zones its open rows were imported with. At
// 14:00 UTC the window 09:00-17:00 is open in Berlin and closed in Tokyo
// until 00:00 UTC: the 5 Berlin rows go at once, the 10 Tokyo rows from the
// full bucket at midnight.
func TestCampaignETAWindow(t *testing.T) {
	ctx := context.Background()
	now := t0
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), driver.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.AddAccount(ctx, campaign.Account{Name: "main-01", PhoneNumberID: "1", Tier: campaign.TierActive, TokenEnv: "T"}); err != nil {
		t.Fatal(err)
	}
	w, err := campaign.ParseWindow("09:00-17:00", "")
	if err != nil {
		t.Fatal(err)
	}
	im, err := st.Import(ctx, campaign.Campaign{Name: "c.csv", Fingerprint: "fp", Source: "c.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "hi"}, Schedule: campaign.Schedule{Window: &w}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		zone := "Asia/Tokyo"
		if i < 5 {
			zone = "Europe/Berlin"
		}
		if _, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: "x", Phone: fmt.Sprintf("+4915100000%03d", i), Zones: zone}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	zones, err := readmodel.New(st).OpenZones(ctx, c.ID)
	if err != nil || len(zones) != 2 || zones["Europe/Berlin"] != 5 || zones["Asia/Tokyo"] != 10 {
		t.Fatalf("open rows by zone %v (%v), want 5 in Berlin and 10 in Tokyo", zones, err)
	}
	e, err := Reporter{Src: st, Reads: readmodel.New(st), Now: now, Loc: time.UTC}.CampaignETA(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if e == nil || e.Finish == nil || !e.Finish.Equal(midnight) || e.QuotaResets != 1 || e.Start != nil ||
		e.Text != "about 10 h 0 min (needs 1 quota reset)" {
		t.Errorf("ETA %+v, want the Tokyo rows at %v", e, midnight)
	}
}
