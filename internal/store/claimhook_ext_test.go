package store_test

import (
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store"
)

// The store's own tests claim through internal/claim (claimhook_test.go).
func init() {
	store.SetTestLedger(func(s *store.Store) store.TestLedger { return claim.New(s) })
}
