package runner

import (
	"runtime"
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

// The pacer lets the heap grow by its headroom while GOGC's share of the
// live heap is less, and keeps GOGC's share once it is more.
func TestPaceGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	before := gc()
	runtime.GC() // the live heap is known: a test binary's few MiB

	p := paceGC(10, 1<<30)
	if got := gc(); got < 1000 {
		t.Errorf("with 1 GiB of headroom over a few MiB: GOGC %d, want over 1000", got)
	}
	p.stop()
	if got := gc(); got != before {
		t.Errorf("stopped: GOGC %d, want %d", got, before)
	}

	p = paceGC(10, 0)
	p.step()
	if got := gc(); got != 10 {
		t.Errorf("without headroom: GOGC %d, want 10", got)
	}
	p.stop()

	t.Setenv("GOGC", "150") // the user's choice wins
	p = paceGC(10, 1<<30)
	p.step()
	if got := gc(); got != before {
		t.Errorf("with GOGC set: GOGC %d, want %d untouched", got, before)
	}
	p.stop()
}
