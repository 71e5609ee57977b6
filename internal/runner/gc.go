package runner

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// The garbage collector is tuned for each phase of a run, unless the user
// set GOGC or GOMEMLIMIT.
const (
	// importGCPercent: an import's live heap is mostly the set of numbers
	// it has stored (about 20 MiB per million), pointer-free and so cheap
	// to mark; with the default of 100 the heap would grow to twice that
	// before a collection. 10 keeps a million-row import some 4 MiB below
	// 25 for about a tenth more CPU. (A soft memory limit growing with the
	// rows read did no better: the runtime's own ~8 MiB beside the heap
	// leaves a base too tight early on or too loose at the end, and near
	// the limit it hands pages back to the kernel and faults them in again,
	// doubling the CPU.)
	importGCPercent = 10
	// importHeadroom: while the live heap is small (any list under a few
	// hundred thousand rows) 10 % of it is a few hundred KiB, and the
	// collector ran every few hundred rows: a third of a 20k-row import's
	// CPU. The heap may always grow this much between collections; it is
	// what GOGC 10 allows at 20 MiB of live heap, less than a 1M import
	// reaches, so the 1M peak stays where it was (3 MiB added one to the
	// 1M import with 10 % invalid rows, for no less CPU at 20k).
	importHeadroom = 2 << 20
	// checkGCPercent: a check holds the same set of numbers but stores
	// nothing, so the collector is a larger share of its CPU: at 25 a
	// million rows peak at ~58 MiB instead of ~75 for a tenth more CPU
	// (at 10, 55 MiB for 40 % more).
	checkGCPercent = 25
	checkHeadroom  = importHeadroom
	// sendGCPercent: a sender's live heap is small (the claims in flight
	// and their connections' buffers, a few MiB), and nearly all it
	// allocates is per-request garbage: at thousands of requests a second,
	// collecting 4× less often saves about a tenth of the CPU.
	// sendMemoryLimit keeps a soft ceiling on it all the same: with a
	// server answering in 2 s at 800 msg/s, 1,600 requests in flight hold
	// some 60 MiB of connections, which GOGC 400 alone would let grow to
	// 250 MiB.
	sendGCPercent   = 400
	sendMemoryLimit = 128 << 20
	// receiveGCPercent: a webhook receiver's live heap is small too (the
	// bodies awaiting their commit, the applier's batch), and what it
	// allocates is per-post garbage (net/http's request, the decoded
	// statuses): at 5,000 posts a second, 400 took 6 % off its CPU a post
	// (bench/webhook.sh, alternated with 100). The limit bounds it as the
	// sender's does.
	receiveGCPercent   = 400
	receiveMemoryLimit = 128 << 20
)

// TuneReceiverGC tunes the collector for a process that only receives
// webhooks (webhook serve; a run's receiver has the sender's tuning) and
// returns the function that restores it.
func TuneReceiverGC() (restore func()) { return tuneGC(receiveGCPercent, receiveMemoryLimit) }

// tuneGC sets GOGC to percent and, when limit > 0, a soft memory limit,
// and returns the function that restores both. It changes nothing when
// GOGC or GOMEMLIMIT are set in the environment.
func tuneGC(percent int, limit int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prevGC := debug.SetGCPercent(percent)
	prevLimit := debug.SetMemoryLimit(-1) // -1 reads it
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	}
}

// gcPacer keeps the collector's GOGC at percent or above, so that the
// heap may grow by at least headroom bytes past the live heap between
// collections: a floor in bytes, where GOGC alone is a fraction of a
// live heap that starts near nothing. (The runtime's own floor, 4 MiB at
// GOGC 100, shrinks with GOGC: 410 KiB at 10.)
type gcPacer struct {
	percent  int
	headroom uint64
	cur      int // the GOGC set now; 0: the pacer is off (GOGC or GOMEMLIMIT set by the user)
	live     []metrics.Sample
	restore  func()
}

// paceGC starts pacing the collector; call step as the work goes on (it
// is cheap: a metrics read) and stop at the end to restore the settings.
// It changes nothing when GOGC or GOMEMLIMIT are set in the environment.
func paceGC(percent int, headroom uint64) *gcPacer {
	p := &gcPacer{percent: percent, headroom: headroom, restore: func() {}}
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return p
	}
	p.restore = tuneGC(percent, 0)
	p.cur = percent
	p.live = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	p.step()
	return p
}

// step sets GOGC for the live heap the last collection found, when it
// moved by more than an eighth from the GOGC set.
func (p *gcPacer) step() {
	if p.cur == 0 {
		return
	}
	metrics.Read(p.live)
	if p.live[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	want := p.percent
	// Before the first collection the live heap reads 0: a few MiB is
	// what a process holds by then.
	if live := max(p.live[0].Value.Uint64(), 2<<20); p.headroom*100/live > uint64(want) {
		want = int(p.headroom * 100 / live)
	}
	if d := want - p.cur; d > p.cur/8 || -d > p.cur/8 {
		debug.SetGCPercent(want)
		p.cur = want
	}
}

// stop restores the collector's settings.
func (p *gcPacer) stop() { p.restore() }
