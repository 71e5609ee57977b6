package slowtrace

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"", 0}, {"20ms", 20 * time.Millisecond}, {"1us", time.Microsecond}, {"fast", 0}, {"-5ms", 0}} {
		if got := parse(tc.in); got != tc.want {
			t.Errorf("parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// A span logs one line with its parts when it took the threshold or
// longer, nothing when it was quicker or tracing is off.
func TestEnd(t *testing.T) {
	var b strings.Builder
	out, was := &b, threshold
	defer func() { threshold = was }()
	setOut(t, out)

	threshold = 0
	Start().End("off")
	threshold = time.Hour
	Start().End("quick")
	if b.Len() != 0 {
		t.Fatalf("logged %q, want nothing", b.String())
	}
	threshold = time.Nanosecond
	sp := Start()
	sp.End("write", "by", Caller(0), "mutex", 1500*time.Microsecond, "tries", 2)
	line := b.String()
	for _, want := range []string{" write took=", " gc=", " gcpause=", " by=slowtrace.TestEnd ", " mutex=1.5ms ", " tries=2\n"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

func setOut(t *testing.T, w *strings.Builder) {
	was := out
	out = w
	t.Cleanup(func() { out = was })
}

// A thread's span adds the thread's time on a CPU and in the run queue.
func TestThreadSpan(t *testing.T) {
	var b strings.Builder
	was := threshold
	defer func() { threshold = was }()
	setOut(t, &b)
	threshold = time.Nanosecond
	sp := StartThread()
	for x := range 10_000_000 {
		sink += x * x
	}
	sp.End("body", "bodies", 1)
	line := b.String()
	for _, want := range []string{" body took=", " bodies=1 cpu=", " runqueue="} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "cpu=0s") {
		t.Errorf("line %q: no CPU time for a thread that ran", line)
	}
}

var sink int
