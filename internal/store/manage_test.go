package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
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
			_, err := st.UpdateAccount(ctx, "other", campaign.AccountChange{PhoneNumberID: ptr("111")})
			return err
		}},
	} {
		err := tt.try()
		if !errors.Is(err, driver.ErrNumberTaken) || !strings.Contains(err.Error(), "in use by account main") || !strings.Contains(err.Error(), "111") {
			t.Errorf("%s of a taken number: %v, want ErrNumberTaken naming main and 111", tt.name, err)
		}
	}
	// The same account added again is told apart as a taken name (the
	// sandbox adds its demo accounts on every run and relies on it).
	if err := add("main", "111"); !errors.Is(err, driver.ErrExists) {
		t.Errorf("main added again: %v, want ErrExists", err)
	}
	if a := accountByName(t, st, "other"); a.PhoneNumberID != "222" {
		t.Errorf("refused set changed the number to %s", a.PhoneNumberID)
	}
	if n := countRows(t, st, `SELECT count(*) FROM accounts`); n != 2 {
		t.Errorf("%d accounts after a refused add, want 2", n)
	}
	// Setting an account's own number again is no change, not a clash.
	if _, err := st.UpdateAccount(ctx, "main", campaign.AccountChange{PhoneNumberID: ptr("111"), Tier: ptr(campaign.TierWarm)}); err != nil {
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
	if _, err := st.AddAccount(ctx, campaign.Account{Name: "fourth", PhoneNumberID: "555", Tier: campaign.TierNew, TokenEnv: "T"}); !errors.Is(err, driver.ErrNumberTaken) ||
		!strings.Contains(err.Error(), "in use by account first") {
		t.Errorf("joining a shared number: %v, want ErrNumberTaken naming first", err)
	}
	if _, err := st.UpdateAccount(ctx, "second", campaign.AccountChange{PhoneNumberID: ptr("556")}); err != nil {
		t.Fatalf("moving a shared account to its own number: %v", err)
	}
	if _, err := st.UpdateAccount(ctx, "third", campaign.AccountChange{Tier: ptr(campaign.TierWarm)}); err != nil {
		t.Errorf("other settings of an account still sharing: %v", err)
	}
	// second, now on 556 alone, is held there like any account.
	if _, err := st.UpdateAccount(ctx, "third", campaign.AccountChange{PhoneNumberID: ptr("556")}); !errors.Is(err, driver.ErrNumberTaken) {
		t.Errorf("third onto second's new number: %v, want ErrNumberTaken", err)
	}
}

func registerRunner(t *testing.T, st *Store, id string, campaignID int64, beat time.Time) {
	t.Helper()
	if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: id, CampaignID: campaignID, Host: "h", PID: 42, StartedAt: beat, HeartbeatAt: beat}); err != nil {
		t.Fatal(err)
	}
}
