package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/store"
)

// Every sandbox run ensures the demo accounts: the second time they exist,
// numbers and all, and that is no error.
func TestEnsureDemoAccountsTwice(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "sandbox.db"), store.Options{Now: time.Now, Location: time.UTC})
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
