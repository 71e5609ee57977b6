package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store"
)

// The black-box tests of the store (package store_test) seed through
// storetest's helpers; these open the database as the product does.

// t0 is 09:00 on the first quota day of every test; instants are offsets.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newFakeClock() *clock.Sim { return clock.NewSim(t0) }

func openTest(t *testing.T, clk *clock.Sim) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "wasend.db"), store.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
