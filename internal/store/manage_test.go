package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Two live accounts never share a phone-number id: add and set refuse it
// and name the account that has it; a removed account's number is free.
func TestPhoneNumberIDBelongsToOneAccount(t *testing.T) {
	st := openTest(t, newFakeClock())
	ctx := t.Context()
	add := func(name, number string) error {
		_, err := st.AddAccount(ctx, campaign.Account{Name: name, PhoneNumberID: number, Tier: campaign.TierNew, TokenEnv: "T"})
		return err
	}
	if err := add("main", "111"); err != nil {
		t.Fatal(err)
	}
	if err := add("other", "222"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		try  func() error
	}{
		{"add", func() error { return add("twin", "111") }},
		{"set", func() error {
			_, err := st.UpdateAccount(ctx, "other", AccountChange{PhoneNumberID: ptr("111")})
			return err
		}},
	} {
		err := tt.try()
		if !errors.Is(err, ErrNumberTaken) || !strings.Contains(err.Error(), "in use by account main") || !strings.Contains(err.Error(), "111") {
			t.Errorf("%s of a taken number: %v, want ErrNumberTaken naming main and 111", tt.name, err)
		}
	}
	// The same account added again is told apart as a taken name (the
	// sandbox adds its demo accounts on every run and relies on it).
	if err := add("main", "111"); !errors.Is(err, ErrExists) {
		t.Errorf("main added again: %v, want ErrExists", err)
	}
	if a := accountByName(t, st, "other"); a.PhoneNumberID != "222" {
		t.Errorf("refused set changed the number to %s", a.PhoneNumberID)
	}
	if n := countRows(t, st, `SELECT count(*) FROM accounts`); n != 2 {
		t.Errorf("%d accounts after a refused add, want 2", n)
	}
	// Setting an account's own number again is no change, not a clash.
	if _, err := st.UpdateAccount(ctx, "main", AccountChange{PhoneNumberID: ptr("111"), Tier: ptr(campaign.TierWarm)}); err != nil {
		t.Errorf("set of its own number: %v", err)
	}
	// The index holds even for a writer that skips the store's check.
	if _, err := st.db.ExecContext(ctx, `INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
		VALUES ('raw', '111', 'new', 'T', 0, 1, 0, '2026-01-01')`); !isUnique(err) {
		t.Errorf("raw insert of a taken number: %v, want a unique-constraint error", err)
	}

	if err := st.RemoveAccount(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if err := add("main", "111"); err != nil {
		t.Errorf("name and number of a removed account: %v, want them free", err)
	}
}

// A database from before 0007 in which two accounts share a number
// migrates without failing; the pair is let be (both still send), nothing
// new may join it, and moving one of them to a number of its own works.
func TestMigrationKeepsSharedNumbers(t *testing.T) {
	path, old, exec := oldDatabase(t, "0007")
	for _, name := range []string{"first", "second", "third"} {
		exec(`INSERT INTO accounts (name, phone_number_id, tier, token_env, created_at, tokens, tokens_at, quota_day)
			VALUES (?, '555', 'new', 'T', 0, 5, 0, '2026-03-02')`, name)
	}
	old.Close()

	st := openAt(t, path, newFakeClock())
	ctx := t.Context()
	accts, err := st.Accounts(ctx)
	if err != nil || len(accts) != 3 {
		t.Fatalf("accounts after migration: %d, %v; want all 3", len(accts), err)
	}
	if _, err := st.AddAccount(ctx, campaign.Account{Name: "fourth", PhoneNumberID: "555", Tier: campaign.TierNew, TokenEnv: "T"}); !errors.Is(err, ErrNumberTaken) ||
		!strings.Contains(err.Error(), "in use by account first") {
		t.Errorf("joining a shared number: %v, want ErrNumberTaken naming first", err)
	}
	if _, err := st.UpdateAccount(ctx, "second", AccountChange{PhoneNumberID: ptr("556")}); err != nil {
		t.Fatalf("moving a shared account to its own number: %v", err)
	}
	if _, err := st.UpdateAccount(ctx, "third", AccountChange{Tier: ptr(campaign.TierWarm)}); err != nil {
		t.Errorf("other settings of an account still sharing: %v", err)
	}
	// second, now on 556 alone, is held there like any account.
	if _, err := st.UpdateAccount(ctx, "third", AccountChange{PhoneNumberID: ptr("556")}); !errors.Is(err, ErrNumberTaken) {
		t.Errorf("third onto second's new number: %v, want ErrNumberTaken", err)
	}
}

func registerRunner(t *testing.T, st *Store, id string, campaignID int64, beat time.Time) {
	t.Helper()
	if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: id, CampaignID: campaignID, Host: "h", PID: 42, StartedAt: beat, HeartbeatAt: beat}); err != nil {
		t.Fatal(err)
	}
}

// An account is removed softly: gone from lists and claims, its history
// kept and its rows still naming it; refused while a live runner has rows
// in flight through it.
func TestRemoveAccount(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	a := mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	mustAccount(t, st, "b", campaign.TierActive, campaign.Overrides{})
	if _, err := st.UpdateAccount(ctx, "b", AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "remove", 10)
	registerRunner(t, st, "live", c.ID, t0)

	sent := mustClaim(t, st, c.ID, "live", t0)
	if sent.Account.Name != "a" {
		t.Fatalf("first claim on %s, want a", sent.Account.Name)
	}
	err := st.RemoveAccount(ctx, "a")
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "campaign pause 1") {
		t.Fatalf("remove with a row in flight: %v, want ErrInUse naming the campaign", err)
	}
	if err := st.Record(ctx, sent, "live", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}

	// A row held by a runner that went silent holds nothing back.
	stuck := mustClaim(t, st, c.ID, "live", t0)
	if stuck.Account.Name != "a" {
		t.Fatalf("second claim on %s, want a", stuck.Account.Name)
	}
	clk.Set(at(LiveRunner + time.Second))
	if err := st.RemoveAccount(ctx, "a"); err != nil {
		t.Fatalf("remove with only a dead runner's row: %v", err)
	}
	if _, err := st.UpdateAccount(ctx, "b", AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}

	if _, err := st.Account(ctx, "a"); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("removed account still found: %v", err)
	}
	if accts, _ := st.Accounts(ctx); len(accts) != 1 || accts[0].Name != "b" {
		t.Errorf("accounts after remove: %+v, want only b", accts)
	}
	if _, err := st.UpdateAccount(ctx, "a", AccountChange{Disabled: ptr(false)}); !errors.Is(err, campaign.ErrNotFound) {
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
	if n := countRows(t, st, `SELECT count(*) FROM attempts WHERE account_id = ?`, a.ID); n != 2 {
		t.Errorf("%d attempts of the removed account kept, want 2", n)
	}
	if got := readMessage(t, st, sent.Message.ID); got.state != "sent" {
		t.Errorf("its sent row is %s", got.state)
	}
	var name string
	if err := st.db.QueryRowContext(ctx, `SELECT a.name FROM messages m JOIN accounts a ON a.id = m.account_id WHERE m.id = ?`,
		sent.Message.ID).Scan(&name); err != nil || name != RemovedName("a", a.ID) {
		t.Errorf("sent row's account: %q, %v; want %q", name, err, RemovedName("a", a.ID))
	}
	// With b removed too there is nothing to send from.
	if err := st.Heartbeat(ctx, "live", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveAccount(ctx, "b"); !errors.Is(err, ErrInUse) {
		t.Fatalf("remove b with rows in flight: %v", err)
	}
	clk.Set(at(2*LiveRunner + 2*time.Second))
	if err := st.RemoveAccount(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	var we *campaign.WaitError
	if _, err := st.Claim(ctx, c.ID, "live", clk.Now()); !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Errorf("claim with every account removed: %v, want a wait for an account", err)
	}
}

// Pause and cancel are named moves: each applies to the states it names
// and says why it does not apply to the others.
func TestPauseAndCancelCampaign(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "manage", 5)

	was, err := st.PauseCampaign(ctx, c.ID, PausedByOperator)
	if err != nil || was != campaign.CampaignRunning {
		t.Fatalf("pause: %s, %v", was, err)
	}
	if _, err := st.Claim(ctx, c.ID, "r", t0); !errors.Is(err, campaign.ErrPaused) {
		t.Errorf("claim of a paused campaign: %v, want ErrPaused", err)
	}
	if err := st.CampaignStopped(ctx, c.ID); !errors.Is(err, campaign.ErrPaused) {
		t.Errorf("CampaignStopped of a paused campaign: %v", err)
	}
	if was, err := st.PauseCampaign(ctx, c.ID, "again"); err != nil || was != campaign.CampaignPaused {
		t.Errorf("second pause: %s, %v; want no change", was, err)
	}
	if got, _ := st.Campaign(ctx, c.ID); got.PauseReason != PausedByOperator {
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
	if err := st.Record(ctx, done, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
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
	if _, err := st.Claim(ctx, c.ID, "r", at(time.Minute)); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("claim of a cancelled campaign: %v, want ErrCancelled", err)
	}
	if err := st.CampaignStopped(ctx, c.ID); !errors.Is(err, campaign.ErrCancelled) {
		t.Errorf("CampaignStopped of a cancelled campaign: %v", err)
	}
	// The request in flight finishes and is recorded; nothing else moves.
	if err := st.Record(ctx, inFlight, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}, at(time.Minute)); err != nil {
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
		{"pause", func() error { _, err := st.PauseCampaign(ctx, c.ID, "x"); return err }, ErrFinal},
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
	f := mustCampaign(t, st, "finished", 1)
	fin := mustClaim(t, st, f.ID, "r", at(time.Minute))
	if err := st.Record(ctx, fin, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.3"}, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, f.ID, "r", at(time.Minute)); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("claim of a done campaign: %v", err)
	}
	if _, err := st.PauseCampaign(ctx, f.ID, "x"); !errors.Is(err, ErrFinal) {
		t.Errorf("pause of a finished campaign: %v, want ErrFinal", err)
	}
	if _, err := st.CancelCampaign(ctx, f.ID); !errors.Is(err, ErrFinal) {
		t.Errorf("cancel of a finished campaign: %v, want ErrFinal", err)
	}
	if _, err := st.CancelCampaign(ctx, 999); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("cancel of no campaign: %v, want ErrNotFound", err)
	}
}

// A campaign is deleted with everything it recorded, and only while no
// live runner sends it.
func TestDeleteCampaign(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	ctx := t.Context()
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	keep := mustCampaign(t, st, "keep", 3)
	c := mustCampaign(t, st, "delete", 4)
	registerRunner(t, st, "r", c.ID, t0)
	cl := mustClaim(t, st, c.ID, "r", t0)
	if err := st.Record(ctx, cl, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, t0); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, keep.ID, "other", t0)

	err := st.DeleteCampaign(ctx, c.ID)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "process 42 on h") {
		t.Fatalf("delete while a runner beats: %v, want ErrInUse naming it", err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM messages WHERE campaign_id = ?`, c.ID); n != 4 {
		t.Fatalf("refused delete left %d rows, want 4", n)
	}

	clk.Set(at(LiveRunner + time.Second))
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
		`SELECT count(*) FROM attempts WHERE message_id NOT IN (SELECT id FROM messages)`,
	} {
		arg := any(c.ID)
		if !strings.Contains(q, "?") {
			arg = nil
		}
		var n int
		var err error
		if arg == nil {
			err = st.db.QueryRowContext(ctx, q).Scan(&n)
		} else {
			err = st.db.QueryRowContext(ctx, q, arg).Scan(&n)
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

func TestRenameCampaign(t *testing.T) {
	st := openTest(t, newFakeClock())
	c := mustCampaign(t, st, "old", 1)
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
