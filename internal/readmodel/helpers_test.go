package readmodel_test

import (
	"time"

	"github.com/wasend/wasend/internal/store/storetest"
)

// The tests build state through the store's public API and read it back
// through a Reader over the same database.

var (
	t0           = storetest.T0
	newFakeClock = storetest.NewClock
	openTest     = storetest.OpenTest
)

func at(d time.Duration) time.Time { return t0.Add(d) }
