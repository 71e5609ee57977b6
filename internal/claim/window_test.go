package claim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
)

// windowCampaign imports one row per zone set, in order, with a send
// window.
func windowCampaign(t *testing.T, st *store.Store, name string, w campaign.Window, zones ...string) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{
		Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec:     campaign.Spec{Kind: campaign.KindText, Text: "Hi"},
		Schedule: campaign.Schedule{Window: &w},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i, z := range zones {
		m := campaign.Message{Line: i + 2, Input: phone(i), Phone: phone(i), Body: "Hi", Zones: z}
		if reason, err := im.Add(t.Context(), m); err != nil || reason != "" {
			t.Fatalf("add line %d: %q, %v", m.Line, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClaimHoldsRowsOutsideTheirWindow: t0 is Monday 09:00 UTC — 10:00 in
// Berlin, 04:00 in New York, 01:00 in Los Angeles. With a 09:00-20:00
// window the Berlin rows go at once, past the New York rows before them;
// New York's open at 14:00 UTC, the row in both New York's and Los
// Angeles's zones at 17:00, and the row whose zones are never open at
// once fails.
func TestClaimHoldsRowsOutsideTheirWindow(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	w, err := campaign.ParseWindow("09:00-20:00", "mon-fri")
	if err != nil {
		t.Fatal(err)
	}
	c := windowCampaign(t, st, "windows", w,
		"America/New_York", "America/New_York", "America/Los_Angeles,America/New_York",
		"Europe/Berlin", "Europe/Berlin", "Europe/Berlin,Pacific/Kiritimati")
	line := func(cl campaign.Claim) int { return cl.Message.Line }

	claims := runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantAccount: "a"},
		{At: 0, WantAccount: "a"},
		{At: 0, WantWait: campaign.WaitWindow, WantUntil: 5 * time.Hour},
	})
	if line(claims[0]) != 5 || line(claims[1]) != 6 {
		t.Fatalf("claimed lines %d and %d at 09:00 UTC, want the Berlin rows 5 and 6", line(claims[0]), line(claims[1]))
	}
	q, err := readmodel.New(st).CampaignQueue(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if q.WindowWait != 3 || q.Waiting != 0 || q.Ready != 0 || q.InFlight != 2 {
		t.Errorf("queue %+v, want 3 waiting for their window, 2 in flight", q)
	}
	var why string
	if err := st.Reader().QueryRow(`SELECT error_message FROM messages WHERE line = 7 AND state = 'failed'`).Scan(&why); err != nil ||
		!strings.Contains(why, "never open in all of the recipient's time zones (Europe/Berlin, Pacific/Kiritimati)") {
		t.Errorf("the row whose zones never overlap: %q, %v", why, err)
	}
	checkCounts(t, st, "09:00 UTC", c.ID)

	claims = runClaims(t, st, clk, c.ID, []claimStep{
		{At: 5*time.Hour - time.Second, WantWait: campaign.WaitWindow, WantUntil: 5 * time.Hour},
		{At: 5 * time.Hour, WantAccount: "a"},
		{At: 5 * time.Hour, WantAccount: "a"},
		{At: 5 * time.Hour, WantWait: campaign.WaitWindow, WantUntil: 8 * time.Hour},
	})
	if line(claims[0]) != 2 || line(claims[1]) != 3 {
		t.Fatalf("claimed lines %d and %d at 14:00 UTC, want the New York rows 2 and 3", line(claims[0]), line(claims[1]))
	}
	claims = runClaims(t, st, clk, c.ID, []claimStep{
		{At: 8 * time.Hour, WantAccount: "a"},
		{At: 8 * time.Hour, WantWait: campaign.WaitInFlight},
	})
	if line(claims[0]) != 4 {
		t.Fatalf("claimed line %d at 17:00 UTC, want line 4 (New York and Los Angeles)", line(claims[0]))
	}
	q, _ = readmodel.New(st).CampaignQueue(t.Context(), c.ID)
	if q.WindowWait != 0 || q.InFlight != 5 {
		t.Errorf("queue %+v, want nothing waiting for its window", q)
	}
	if n := countRows(t, st, `SELECT count(*) FROM messages WHERE window_wait = 1`); n != 0 {
		t.Errorf("%d rows still marked as waiting for their window after being claimed", n)
	}
	checkCounts(t, st, "17:00 UTC", c.ID)
}

// A window that closes on many rows at once moves them a bounded batch
// per claim, and each claim commits what it moved.
func TestClaimHoldsManyRowsInBatches(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 10000))
	w, _ := campaign.ParseWindow("09:00-20:00", "")
	zones := make([]string, MaxHeldPerClaim+100)
	for i := range zones {
		zones[i] = "America/New_York"
	}
	zones[len(zones)-1] = "Europe/Berlin"
	c := windowCampaign(t, st, "many", w, zones...)

	_, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 8)
	var we *campaign.WaitError
	if !asWait(err, &we) || we.Reason != campaign.WaitWindow || !we.Until.Equal(t0) {
		t.Fatalf("first claim = %v, want a wait for the window, to look again at once", err)
	}
	held := countRows(t, st, `SELECT count(*) FROM messages WHERE window_wait = 1`)
	if held < MaxHeldPerClaim || held >= len(zones)-1 {
		t.Fatalf("%d rows held by the first claim, want about %d", held, MaxHeldPerClaim)
	}
	cs, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 8)
	if err != nil || len(cs) != 1 || cs[0].Message.Line != len(zones)+1 {
		t.Fatalf("second claim = %d claims, %v; want the Berlin row", len(cs), err)
	}
	checkCounts(t, st, "holding", c.ID)
}

func asWait(err error, we **campaign.WaitError) bool {
	if err == nil {
		return false
	}
	w, ok := err.(*campaign.WaitError)
	*we = w
	return ok
}

// A new window on a campaign judges its held rows again; a campaign
// imported without one can't get one.
func TestSetWindow(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	w, _ := campaign.ParseWindow("09:00-20:00", "")
	c := windowCampaign(t, st, "ny", w, "America/New_York")
	runClaims(t, st, clk, c.ID, []claimStep{{At: 0, WantWait: campaign.WaitWindow, WantUntil: 5 * time.Hour}})
	wide, _ := campaign.ParseWindow("00:00-24:00", "")
	if err := st.SetSchedule(t.Context(), c.ID, campaign.Schedule{Window: &wide}); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{{At: time.Minute, WantAccount: "a"}})

	plain := mustCampaign(t, st, "plain", 1)
	err := st.SetSchedule(t.Context(), plain.ID, campaign.Schedule{Window: &wide})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("campaign %d was imported without a send window", plain.ID)) {
		t.Errorf("window on a campaign without zones: %v", err)
	}
	got, _ := st.Campaign(t.Context(), c.ID)
	if got.Schedule.Window == nil || *got.Schedule.Window != wide {
		t.Errorf("window read back: %+v", got.Schedule.Window)
	}
}

// Rows read again past suppressed ones are judged by the window too: a
// suppressed Berlin row at the head, New York rows (closed) behind it, a
// Berlin row last — the claim takes the last one, not a closed one.
func TestClaimPastSuppressedKeepsTheWindow(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	w, _ := campaign.ParseWindow("09:00-20:00", "")
	c := windowCampaign(t, st, "sup", w, "Europe/Berlin", "America/New_York", "America/New_York", "Europe/Berlin")
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: phone(0), Reason: "STOP"}}); err != nil {
		t.Fatal(err)
	}
	cs, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 1)
	if err != nil || len(cs) != 1 || cs[0].Message.Line != 5 {
		t.Fatalf("claim = %+v, %v; want line 5 (Berlin, open)", cs, err)
	}
	checkCounts(t, st, "past suppressed", c.ID)
}

// TestClaimOpensInADaylightSavingGap: a 02:30-03:15 window in Berlin on
// the night the clocks go from 02:00 to 03:00 (2026-03-29, 01:00 UTC)
// opens at 03:00; the row waits for that, not for the next day.
func TestClaimOpensInADaylightSavingGap(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, limited(100, 100, 1000))
	w, err := campaign.ParseWindow("02:30-03:15", "")
	if err != nil {
		t.Fatal(err)
	}
	c := windowCampaign(t, st, "gap", w, "Europe/Berlin")
	night := time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC).Sub(t0) // midnight in Berlin
	opens := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC).Sub(t0)
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: night, WantWait: campaign.WaitWindow, WantUntil: opens},
		{At: opens, WantAccount: "a"},
	})
}
