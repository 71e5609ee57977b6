package store_test

import (
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/storetest"
)

// The store's own tests (package store) check counts with storetest's
// checks, which they may not import: storetest imports the store.
func init() {
	store.CheckCountsHook = storetest.CheckCounts
	store.RecountHook = storetest.Recount
	store.HoldCountsHook = storetest.HoldCounts
}
