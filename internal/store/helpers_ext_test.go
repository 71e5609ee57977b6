package store_test

import (
	"time"

	"github.com/wasend/wasend/internal/store/storetest"
)

// The black-box tests of the store (package store_test) seed through
// storetest's helpers and open the database as the product does.

var (
	t0           = storetest.T0
	newFakeClock = storetest.NewClock
	openTest     = storetest.OpenTest
)

func at(d time.Duration) time.Time { return t0.Add(d) }
