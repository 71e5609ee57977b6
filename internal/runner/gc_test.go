package runner

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	before, beforeLimit := gc(), debug.SetMemoryLimit(-1)

	restore := tuneGC(sendGCPercent, sendMemoryLimit)
	if got, limit := gc(), debug.SetMemoryLimit(-1); got != sendGCPercent || limit != sendMemoryLimit {
		t.Errorf("while tuned: GOGC %d, limit %d; want %d, %d", got, limit, sendGCPercent, sendMemoryLimit)
	}
	restore()
	if got, limit := gc(), debug.SetMemoryLimit(-1); got != before || limit != beforeLimit {
		t.Errorf("restored: GOGC %d, limit %d; want %d, %d", got, limit, before, beforeLimit)
	}

	restore = TuneReceiverGC()
	if got, limit := gc(), debug.SetMemoryLimit(-1); got != receiveGCPercent || limit != receiveMemoryLimit {
		t.Errorf("receiving: GOGC %d, limit %d; want %d, %d", got, limit, receiveGCPercent, receiveMemoryLimit)
	}
	restore()
	if got, limit := gc(), debug.SetMemoryLimit(-1); got != before || limit != beforeLimit {
		t.Errorf("restored after receiving: GOGC %d, limit %d; want %d, %d", got, limit, before, beforeLimit)
	}

	t.Setenv("GOGC", "150") // the user's choice wins
	restore = tuneGC(importGCPercent, 0)
	if got := gc(); got != before {
		t.Errorf("with GOGC set: GOGC %d, want %d untouched", got, before)
	}
	restore()
}
