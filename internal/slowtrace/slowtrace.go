// Package slowtrace logs the operations on a latency path that took longer
// than WASEND_TRACE_SLOW (a duration such as 20ms; off when unset), each
// with its parts and the garbage collector's work meanwhile, to stderr.
// It is an instrument for finding what stalls an answer now and then
// (issue 25: the webhook receiver's p99), where averages and profiles
// show nothing: the stall is rare and its cause is a wait, not CPU.
package slowtrace

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// threshold is WASEND_TRACE_SLOW; 0 traces nothing.
var threshold = parse(os.Getenv("WASEND_TRACE_SLOW"))

// out is where the lines go.
var out io.Writer = os.Stderr

func parse(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// On reports whether tracing is on; a caller measures its parts only then.
func On() bool { return threshold > 0 }

// Span is one operation being timed. Its zero value, what Start returns
// when tracing is off, logs nothing.
type Span struct {
	start  time.Time
	gc     gcState
	thread *schedStat // StartThread's: the thread's at the start
}

// schedStat is a thread's time on a CPU and waiting in the run queue for
// one, from Linux's /proc/thread-self/schedstat.
type schedStat struct{ run, wait time.Duration }

func readSched() *schedStat {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	var st schedStat
	if err != nil {
		return &st
	}
	var run, wait int64
	fmt.Sscan(string(b), &run, &wait)
	return &schedStat{time.Duration(run), time.Duration(wait)}
}

// StartThread begins a span of work its goroutine does on one OS thread,
// such as a transaction's statements (a call into SQLite runs on the
// goroutine's thread): the goroutine is kept on its thread until End,
// which adds how long the thread ran (cpu) and waited for a CPU (runqueue)
// meanwhile; the rest of the span's time it was blocked (a read from the
// disk, a lock) or another goroutine ran on it.
func StartThread() Span {
	if !On() {
		return Span{}
	}
	runtime.LockOSThread()
	sp := Start()
	sp.thread = readSched()
	return sp
}

// Start begins a span.
func Start() Span {
	if !On() {
		return Span{}
	}
	return Span{start: time.Now(), gc: readGC()}
}

// Since is how long the span has run (0 when tracing is off).
func (s Span) Since() time.Duration {
	if s.start.IsZero() {
		return 0
	}
	return time.Since(s.start)
}

// End logs the span as what, with its parts (name, value pairs), when it
// took the threshold or longer.
func (s Span) End(what string, parts ...any) {
	if s.start.IsZero() {
		return
	}
	took := time.Since(s.start)
	if s.thread != nil {
		now := readSched()
		runtime.UnlockOSThread()
		parts = append(parts, "cpu", now.run-s.thread.run, "runqueue", now.wait-s.thread.wait)
	}
	if took < threshold {
		return
	}
	gc := readGC()
	var b strings.Builder
	fmt.Fprintf(&b, "slow %s %s took=%s gc=%d gcpause=%s", s.start.UTC().Format("15:04:05.000000"), what,
		round(took), gc.cycles-s.gc.cycles, round(time.Duration((gc.pause-s.gc.pause)*1e9)))
	for i := 0; i+1 < len(parts); i += 2 {
		v := parts[i+1]
		if d, ok := v.(time.Duration); ok {
			v = round(d)
		}
		fmt.Fprintf(&b, " %v=%v", parts[i], v)
	}
	b.WriteByte('\n')
	io.WriteString(out, b.String())
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

// gcState is what the collector has done so far: cycles, and the time the
// world was stopped for it (CPU seconds of its pauses over GOMAXPROCS).
type gcState struct {
	cycles uint64
	pause  float64
}

var gcNames = []string{"/gc/cycles/total:gc-cycles", "/cpu/classes/gc/pause:cpu-seconds", "/sched/gomaxprocs:threads"}

func readGC() gcState {
	s := make([]metrics.Sample, len(gcNames))
	for i, n := range gcNames {
		s[i].Name = n
	}
	metrics.Read(s)
	var g gcState
	if s[0].Value.Kind() == metrics.KindUint64 {
		g.cycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64 && s[2].Value.Kind() == metrics.KindUint64 && s[2].Value.Uint64() > 0 {
		g.pause = s[1].Value.Float64() / float64(s[2].Value.Uint64())
	}
	return g
}

// Caller names the function skip frames above Caller's caller (0: that
// caller itself), for a span's "by"; "" when tracing is off.
func Caller(skip int) string {
	if !On() {
		return ""
	}
	pc, _, _, ok := runtime.Caller(skip + 1)
	if !ok {
		return "?"
	}
	name := runtime.FuncForPC(pc).Name()
	return name[strings.LastIndexByte(name, '/')+1:]
}
