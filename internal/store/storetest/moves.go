package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// The campaign's moves and the account's removal: each applies to the
// states it names and refuses the others.

func (s suite) moveTests() []sub {
	return []sub{
		{"remove account", s.testRemoveAccount},
		{"pause and cancel", s.testPauseAndCancelCampaign},
		{"delete campaign", s.testDeleteCampaign},
		{"rename campaign", s.testRenameCampaign},
		{"settings", s.testSettings},
		{"drop and readmit an account", s.testReadmitAccount},
		{"outage", s.testOutage},
	}
}

// An account is removed softly: gone from lists and claims, its history
// kept and its rows still naming it; refused while a live runner has rows
// in flight through it.
func (s suite) testRemoveAccount(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	ctx := t.Context()
	a := MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	MustAccount(t, st, "b", campaign.TierActive, campaign.Overrides{})
	if _, err := st.UpdateAccount(ctx, "b", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "remove", 10)
	registerRunner(t, st, "live", c.ID, t0)

	sent := mustClaim(t, st, c.ID, "live", t0)
	if sent.Account.Name != "a" {
		t.Fatalf("first claim on %s, want a", sent.Account.Name)
	}
	err := st.RemoveAccount(ctx, "a")
	if !errors.Is(err, driver.ErrInUse) || !strings.Contains(err.Error(), "campaign pause 1") {
		t.Fatalf("remove with a row in flight: %v, want driver.ErrInUse naming the campaign", err)
	}
	if err := record(t, st, sent, "live", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}

	// A row held by a runner that went silent holds nothing back.
	stuck := mustClaim(t, st, c.ID, "live", t0)
	if stuck.Account.Name != "a" {
		t.Fatalf("second claim on %s, want a", stuck.Account.Name)
	}
	clk.Set(at(driver.LiveRunner + time.Second))
	if err := st.RemoveAccount(ctx, "a"); err != nil {
		t.Fatalf("remove with only a dead runner's row: %v", err)
	}
	if _, err := st.UpdateAccount(ctx, "b", campaign.AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}

	if _, err := st.Account(ctx, "a"); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("removed account still found: %v", err)
	}
	if accts, _ := st.Accounts(ctx); len(accts) != 1 || accts[0].Name != "b" {
		t.Errorf("accounts after remove: %+v, want only b", accts)
	}
	if _, err := st.UpdateAccount(ctx, "a", campaign.AccountChange{Disabled: ptr(false)}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("set on a removed account: %v, want ErrNotFound", err)
	}
	if err := st.RemoveAccount(ctx, "a"); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("second remove: %v, want ErrNotFound", err)
	}
	for range 5 {
		if c := mustClaim(t, st, c.ID, "live", clk.Now()); c.Account.Name != "b" {
			t.Fatalf("claim after remove on %s, want b", c.Account.Name)
		}
	}
	// History stays, under the removed name.
	if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE account_id = ?`, a.ID); n != 2 {
		t.Errorf("%d attempts of the removed account kept, want 2", n)
	}
	if got := readMessage(t, st, sent.Message.ID); got.state != "sent" {
		t.Errorf("its sent row is %s", got.state)
	}
	// An account's row outlives its removal: on Postgres nothing else keeps
	// the claim path's references to it whole (pg 0024 dropped those keys).
	for _, table := range []string{"messages", "attempts", "contact_log"} {
		if n := CountRows(t, st, `SELECT count(*) FROM `+table+` r WHERE r.account_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = r.account_id)`); n != 0 {
			t.Errorf("%d rows of %s name an account that is gone", n, table)
		}
	}
	var name string
	if err := checked(st).QueryRowContext(ctx, `SELECT a.name FROM messages m JOIN accounts a ON a.id = m.account_id WHERE m.id = ?`,
		sent.Message.ID).Scan(&name); err != nil || name != driver.RemovedName("a", a.ID) {
		t.Errorf("sent row's account: %q, %v; want %q", name, err, driver.RemovedName("a", a.ID))
	}
	// With b removed too there is nothing to send from.
	if err := st.Heartbeat(ctx, "live", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveAccount(ctx, "b"); !errors.Is(err, driver.ErrInUse) {
		t.Fatalf("remove b with rows in flight: %v", err)
	}
	clk.Set(at(2*driver.LiveRunner + 2*time.Second))
	if err := st.RemoveAccount(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	var we *campaign.WaitError
	if _, err := claim(t, st, c.ID, "live", clk.Now()); !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Errorf("claim with every account removed: %v, want a wait for an account", err)
	}
}

// Pause and cancel are named moves: each applies to the states it names
// and says why it does not apply to the others.
func (s suite) testPauseAndCancelCampaign(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	ctx := t.Context()
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "manage", 5)

	was, err := st.PauseCampaign(ctx, c.ID, campaign.PausedByOperator)
	if err != nil || was != campaign.CampaignRunning {
		t.Fatalf("pause: %s, %v", was, err)
	}
	if _, err := claim(t, st, c.ID, "r", t0); !errors.Is(err, campaign.ErrPaused) {
		t.Errorf("claim of a paused campaign: %v, want ErrPaused", err)
	}
	if err := st.CampaignStopped(ctx, c.ID); !errors.Is(err, campaign.ErrPaused) {
		t.Errorf("CampaignStopped of a paused campaign: %v", err)
	}
	if was, err := st.PauseCampaign(ctx, c.ID, "again"); err != nil || was != campaign.CampaignPaused {
		t.Errorf("second pause: %s, %v; want no change", was, err)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.PauseReason != campaign.PausedByOperator {
		t.Errorf("pause reason %q", got.PauseReason)
	}
	if _, err := st.ResumeCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.CampaignStopped(ctx, c.ID); err != nil {
		t.Errorf("CampaignStopped of a resumed campaign: %v", err)
	}
	registerRunner(t, st, "r", c.ID, t0)
	inFlight := mustClaim(t, st, c.ID, "r", t0)
	done := mustClaim(t, st, c.ID, "r", t0)
	if err := record(t, st, done, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}

	clk.Set(at(time.Minute))
	if was, err := st.CancelCampaign(ctx, c.ID); err != nil || was != campaign.CampaignRunning {
		t.Fatalf("cancel: %s, %v", was, err)
	}
	got, err := st.Campaign(ctx, c.ID)
	if err != nil || got.State != campaign.CampaignCancelled || !got.FinishedAt.Equal(at(time.Minute)) {
		t.Errorf("cancelled campaign reads %s finished %v, %v", got.State, got.FinishedAt, err)
	}
	if _, err := claim(t, st, c.ID, "r", at(time.Minute)); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("claim of a cancelled campaign: %v, want ErrCancelled", err)
	}
	if err := st.CampaignStopped(ctx, c.ID); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("CampaignStopped of a cancelled campaign: %v", err)
	}
	// The request in flight finishes and is recorded; nothing else moves.
	if err := record(t, st, inFlight, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	n, err := st.Counts(ctx, c.ID)
	if err != nil || n[campaign.Sent] != 2 || n[campaign.Pending] != 3 {
		t.Errorf("counts after cancel: %v, %v; want 2 sent, 3 pending kept", n, err)
	}

	for _, tt := range []struct {
		name string
		try  func() error
		want error
	}{
		{"pause", func() error { _, err := st.PauseCampaign(ctx, c.ID, "x"); return err }, campaign.ErrFinal},
		{"resume", func() error { _, err := st.ResumeCampaign(ctx, c.ID); return err }, campaign.ErrCancelled},
		{"retry unknown", func() error { _, err := st.RequeueUnknown(ctx, c.ID); return err }, campaign.ErrCancelled},
		{"retry failed", func() error { _, err := st.RequeueFailed(ctx, c.ID, nil); return err }, campaign.ErrCancelled},
	} {
		if err := tt.try(); !errors.Is(err, tt.want) {
			t.Errorf("%s of a cancelled campaign: %v, want %v", tt.name, err, tt.want)
		}
	}
	if got, _ := st.Campaign(ctx, c.ID); got.State != campaign.CampaignCancelled {
		t.Errorf("after refused moves the campaign is %s", got.State)
	}
	if was, err := st.CancelCampaign(ctx, c.ID); err != nil || was != campaign.CampaignCancelled {
		t.Errorf("second cancel: %s, %v; want no change", was, err)
	}

	// A finished campaign can be neither paused nor cancelled.
	f := MustCampaign(t, st, "finished", 1)
	fin := mustClaim(t, st, f.ID, "r", at(time.Minute))
	if err := record(t, st, fin, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.3"}, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, st, f.ID, "r", at(time.Minute)); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("claim of a done campaign: %v", err)
	}
	if _, err := st.PauseCampaign(ctx, f.ID, "x"); !errors.Is(err, campaign.ErrFinal) {
		t.Errorf("pause of a finished campaign: %v, want campaign.ErrFinal", err)
	}
	if _, err := st.CancelCampaign(ctx, f.ID); !errors.Is(err, campaign.ErrFinal) {
		t.Errorf("cancel of a finished campaign: %v, want campaign.ErrFinal", err)
	}
	if _, err := st.CancelCampaign(ctx, 999); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("cancel of no campaign: %v, want ErrNotFound", err)
	}
}

// A campaign is deleted with everything it recorded, and only while no
// live runner sends it.
func (s suite) testDeleteCampaign(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	ctx := t.Context()
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	keep := MustCampaign(t, st, "keep", 3)
	c := MustCampaign(t, st, "delete", 4)
	registerRunner(t, st, "r", c.ID, t0)
	cl := mustClaim(t, st, c.ID, "r", t0)
	if err := record(t, st, cl, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, keep.ID, "other", t0)
	// A budget keeps what counts against it (campaign_spend) beside the
	// campaign: it goes with the campaign too.
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "EUR", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}

	err := st.DeleteCampaign(ctx, c.ID)
	if !errors.Is(err, driver.ErrInUse) || !strings.Contains(err.Error(), "process 42 on h") {
		t.Fatalf("delete while a runner beats: %v, want driver.ErrInUse naming it", err)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE campaign_id = ?`, c.ID); n != 4 {
		t.Fatalf("refused delete left %d rows, want 4", n)
	}

	clk.Set(at(driver.LiveRunner + time.Second))
	if err := st.DeleteCampaign(ctx, c.ID); err != nil {
		t.Fatalf("delete once the runner went silent: %v", err)
	}
	if _, err := st.Campaign(ctx, c.ID); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("deleted campaign still found: %v", err)
	}
	for _, q := range []string{
		`SELECT count(*) FROM messages WHERE campaign_id = ?`,
		`SELECT count(*) FROM skipped WHERE campaign_id = ?`,
		`SELECT count(*) FROM runners WHERE campaign_id = ?`,
		`SELECT count(*) FROM campaign_spend WHERE campaign_id = ?`,
		`SELECT count(*) FROM attempts WHERE message_id NOT IN (SELECT id FROM messages)`,
	} {
		arg := any(c.ID)
		if !strings.Contains(q, "?") {
			arg = nil
		}
		var n int
		var err error
		if arg == nil {
			err = checked(st).QueryRowContext(ctx, q).Scan(&n)
		} else {
			err = checked(st).QueryRowContext(ctx, q, arg).Scan(&n)
		}
		if err != nil || n != 0 {
			t.Errorf("%s: %d left, %v", q, n, err)
		}
	}
	if n, err := st.Counts(ctx, keep.ID); err != nil || n.Total() != 3 || n[campaign.Sending] != 1 {
		t.Errorf("the other campaign: %v, %v; want untouched", n, err)
	}
	if err := st.DeleteCampaign(ctx, c.ID); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

// A campaign's settings change in place: the same change again changes
// nothing, a send window needs the time zones an import with one found, a
// cancelled campaign refuses every change.
func (s suite) testSettings(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	c := MustCampaign(t, st, "settings", 2)
	start := t0.Add(time.Hour)
	sc := campaign.Schedule{StartAt: start, StartArg: "+1h", ExpireAfter: 2 * time.Hour}
	for range 2 {
		if err := st.SetSchedule(ctx, c.ID, sc); err != nil {
			t.Fatal(err)
		}
		got, err := st.Campaign(ctx, c.ID)
		if err != nil || !got.Schedule.StartAt.Equal(start) || got.Schedule.ExpireAfter != 2*time.Hour ||
			!got.ExpiresAt().Equal(start.Add(2*time.Hour)) {
			t.Fatalf("schedule: start %v, validity %v, expires %v, %v; want %v, 2h, %v",
				got.Schedule.StartAt, got.Schedule.ExpireAfter, got.ExpiresAt(), err, start, start.Add(2*time.Hour))
		}
	}
	// The same --at given again keeps the start it set.
	if err := st.SetSchedule(ctx, c.ID, campaign.Schedule{StartAt: start.Add(time.Minute), StartArg: "+1h"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Campaign(ctx, c.ID); !got.Schedule.StartAt.Equal(start) {
		t.Errorf("the same --at again moved the start to %v", got.Schedule.StartAt)
	}
	w := &campaign.Window{From: 9 * 60, To: 17 * 60, Days: campaign.EveryDay}
	if err := st.SetSchedule(ctx, c.ID, campaign.Schedule{Window: w}); !errors.Is(err, driver.ErrNoZones) {
		t.Errorf("a window on a campaign imported without one: %v, want driver.ErrNoZones", err)
	}
	weight := 3
	if err := st.SetShare(ctx, c.ID, campaign.ShareChange{Weight: &weight}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.Share.Weight != 3 {
		t.Errorf("weight %d, want 3", got.Share.Weight)
	}
	if err := st.SetPairGap(ctx, c.ID, -time.Second); err == nil {
		t.Error("a negative pair gap was taken")
	}
	if _, err := st.CancelCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSchedule(ctx, c.ID, campaign.Schedule{StartAt: start.Add(time.Hour)}); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("schedule of a cancelled campaign: %v, want campaign.ErrCancelled", err)
	}
	if err := st.SetShare(ctx, c.ID, campaign.ShareChange{Weight: &weight}); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("share of a cancelled campaign: %v, want campaign.ErrCancelled", err)
	}
	if err := st.SetSchedule(ctx, c.ID+100, sc); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("schedule of no campaign: %v, want campaign.ErrNotFound", err)
	}
}

// An account dropped from a campaign comes back only when its reason
// starts with the prefix asked (counted in characters, not bytes).
func (s suite) testReadmitAccount(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	a := MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "readmit", 1)
	for _, tt := range []struct {
		reason, prefix string
		want           bool
	}{
		{"préflight: no token", "préflight:", true},
		{"error 131042: payment", "préflight:", false},
		{"préflight: no token", "préflight: no token and more", false},
	} {
		if err := st.DropAccount(ctx, c.ID, a.ID, tt.reason, 0, t0); err != nil {
			t.Fatal(err)
		}
		// A second drop keeps the first reason.
		if err := st.DropAccount(ctx, c.ID, a.ID, "later", 0, t0); err != nil {
			t.Fatal(err)
		}
		got, err := st.ReadmitAccount(ctx, c.ID, a.ID, tt.prefix)
		if err != nil || got != tt.want {
			t.Errorf("readmit %q dropped for %q: %v, %v; want %v", tt.prefix, tt.reason, got, err, tt.want)
		}
		if _, err := st.ResumeCampaign(ctx, c.ID); err != nil { // readmits every account
			t.Fatal(err)
		}
	}
}

func (s suite) testRenameCampaign(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	c := MustCampaign(t, st, "old", 1)
	for _, tt := range []struct {
		id      int64
		name    string
		want    string
		wantErr error
	}{
		{c.ID, "  spring, second wave ", "spring, second wave", nil},
		{c.ID, "   ", "spring, second wave", errors.New("empty")},
		{999, "x", "", campaign.ErrNotFound},
	} {
		err := st.RenameCampaign(t.Context(), tt.id, tt.name)
		if (err != nil) != (tt.wantErr != nil) || (tt.wantErr == campaign.ErrNotFound && !errors.Is(err, campaign.ErrNotFound)) {
			t.Errorf("rename %d to %q: %v, want %v", tt.id, tt.name, err, tt.wantErr)
		}
		if tt.want != "" {
			if got, _ := st.Campaign(t.Context(), tt.id); got.Name != tt.want {
				t.Errorf("after rename to %q: name %q, want %q", tt.name, got.Name, tt.want)
			}
		}
	}
}

func (s suite) testOutage(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	c := MustCampaign(t, st, "outage", 2)
	ctx := t.Context()
	if o, err := readmodel.New(st).Outage(ctx, c.ID); err != nil || !o.Since.IsZero() {
		t.Fatalf("a new campaign's outage: %+v, %v", o, err)
	}
	want := campaign.Outage{Since: t0, Error: "connection refused", NextProbe: at(4 * time.Second)}
	if err := st.SetOutage(ctx, c.ID, want, ""); err != nil {
		t.Fatal(err)
	}
	if o, err := readmodel.New(st).Outage(ctx, c.ID); err != nil || !o.Since.Equal(want.Since) || o.Error != want.Error || !o.NextProbe.Equal(want.NextProbe) {
		t.Errorf("outage %+v, %v; want %+v", o, err, want)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.State != campaign.CampaignRunning {
		t.Errorf("noting an outage changed the state to %s", got.State)
	}
	if err := st.SetOutage(ctx, c.ID, want, "outage too long"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.State != campaign.CampaignPaused || got.PauseReason != "outage too long" {
		t.Errorf("campaign %s %q, want paused for the outage", got.State, got.PauseReason)
	}
	if err := st.SetOutage(ctx, c.ID, campaign.Outage{}, ""); err != nil {
		t.Fatal(err)
	}
	if o, _ := readmodel.New(st).Outage(ctx, c.ID); !o.Since.IsZero() {
		t.Errorf("cleared outage still reads %+v", o)
	}
	if err := st.SetOutage(ctx, 999, want, ""); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("outage of a missing campaign: %v, want ErrNotFound", err)
	}
}
