package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// Every sandbox run ensures the demo accounts: the second time they exist,
// numbers and all, and that is no error.
func TestEnsureDemoAccountsTwice(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "sandbox.db"), driver.Options{Now: time.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 2 {
		if err := EnsureDemoAccounts(t.Context(), st); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	accts, err := st.Accounts(t.Context())
	if err != nil || len(accts) != len(DemoAccounts) {
		t.Errorf("%d accounts, %v; want the %d demo accounts", len(accts), err, len(DemoAccounts))
	}
}

// A demo account a former version added has no WABA: it gets the demo
// one, whose templates the sandbox answers; an account of the user's is
// left as it is.
func TestEnsureDemoAccountsGivesTheDemoWABA(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sandbox.db"), driver.Options{Now: time.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := DemoAccounts[0]
	old.WABA = ""
	mine := campaign.Account{Name: "mine", PhoneNumberID: "100000000000077", Tier: campaign.TierNew, TokenEnv: SandboxTokenEnv}
	for _, a := range []campaign.Account{old, mine} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := EnsureDemoAccounts(ctx, st); err != nil {
		t.Fatal(err)
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accts {
		want := DemoWABA
		if a.Name == "mine" {
			want = ""
		}
		if a.WABA != want {
			t.Errorf("account %s: WABA %q, want %q", a.Name, a.WABA, want)
		}
	}
}
