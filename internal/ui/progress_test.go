package ui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeClock is a settable Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var t0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

// waitForOutput polls w until it contains want.
func waitForOutput(t *testing.T, w *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(w.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output after 5s:\n%s", want, w.String())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestProgressPlainLines(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	clock := &fakeClock{t: t0}
	p := NewProgress(s, ProgressOptions{
		Label: "campaign 3", Total: 10, Sent: 2, Failed: 1, Unknown: 0,
		Interval: time.Millisecond, Now: clock.Now,
	})
	waitForOutput(t, &errOut, "2026-11-30T14:00:00Z campaign 3: sent 2 failed 1 unknown 0 remaining 7 of 10\n")

	clock.Add(10 * time.Second)
	for range 4 {
		p.Sent()
	}
	p.Failed()
	p.Unknown()
	p.Retry()
	// 6 done in this run over 10 s: 0.6/s, 1 left.
	waitForOutput(t, &errOut, "2026-11-30T14:00:10Z campaign 3: sent 6 failed 2 unknown 1 remaining 1 of 10 retries 1 rate 0.60/s eta ")
	p.Stop()

	got := errOut.String()
	for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if !strings.HasPrefix(line, "2026-11-30T14:00:") || !strings.Contains(line, " campaign 3: sent ") {
			t.Errorf("line %d is not a plain progress line: %q", i+1, line)
		}
	}
	if n := len(got); n > 0 && got[n-1] != '\n' {
		t.Errorf("output does not end in a newline: %q", got)
	}
	last := got[strings.LastIndex(strings.TrimSuffix(got, "\n"), "\n")+1:]
	if want := "sent 6 failed 2 unknown 1 remaining 1 of 10"; !strings.Contains(last, want) {
		t.Errorf("Stop's last line %q, want it to contain %q", last, want)
	}
	if strings.Contains(got, "\r") || strings.Contains(got, "\x1b") {
		t.Errorf("plain output has terminal control characters: %q", got)
	}
}

// TestProgressETARounded: the ETA is left/rate rounded to the second. With
// 1 row left at 0.6/s that is 1.67 s → "eta 2s"; a truncation to whole
// seconds before rounding shows "eta 1s" (and "eta 0s" under a second).
func TestProgressETARounded(t *testing.T) {
	tests := []struct {
		sent    int
		elapsed time.Duration
		want    string
	}{
		{sent: 6, elapsed: 10 * time.Second, want: "remaining 4 of 10 rate 0.60/s eta 7s\n"},        // 6.67 s
		{sent: 9, elapsed: 15 * time.Second, want: "remaining 1 of 10 rate 0.60/s eta 2s\n"},        // 1.67 s
		{sent: 9, elapsed: 4500 * time.Millisecond, want: "remaining 1 of 10 rate 2.00/s eta 1s\n"}, // 0.5 s
		{sent: 5, elapsed: 10 * time.Second, want: "remaining 5 of 10 rate 0.50/s eta 10s\n"},
	}
	for _, tt := range tests {
		var errOut syncBuffer
		s := Test(&bytes.Buffer{}, &errOut)
		clock := &fakeClock{t: t0}
		p := NewProgress(s, ProgressOptions{Label: "c", Total: 10, Interval: time.Hour, Now: clock.Now})
		for range tt.sent {
			p.Sent()
		}
		clock.Add(tt.elapsed)
		p.Stop()
		if got := errOut.String(); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%d sent in %v: %q, want it to end in %q", tt.sent, tt.elapsed, got, tt.want)
		}
	}
}

func TestProgressQuiet(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var errOut syncBuffer
		s := Test(&bytes.Buffer{}, &errOut)
		s.SetTTY(tty, tty)
		s.Quiet = true
		p := NewProgress(s, ProgressOptions{Label: "c", Total: 3, Interval: time.Millisecond, Now: (&fakeClock{t: t0}).Now})
		p.Sent()
		p.Waiting("every account reached its daily cap", true)
		time.Sleep(20 * time.Millisecond)
		p.Failed()
		p.Stop()
		if got := errOut.String(); got != "" {
			t.Errorf("tty %v: quiet progress wrote %q", tty, got)
		}
	}
}

func TestProgressWaiting(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	// An hour between periodic lines: anything written comes from Waiting.
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 5, Interval: time.Hour, Now: (&fakeClock{t: t0}).Now})
	defer p.Stop()

	steps := []struct {
		why     string
		notable bool
		want    string // the line written at once; "" for none
	}{
		{"rate limit: waiting for the next token", false, ""},
		{"every account reached its daily cap", true, "c: sent 0 failed 0 unknown 0 remaining 5 of 5 waiting: every account reached its daily cap\n"},
		{"every account reached its daily cap", true, ""}, // unchanged: said already
		{"", false, ""},
		{"no enabled account", true, "c: sent 0 failed 0 unknown 0 remaining 5 of 5 waiting: no enabled account\n"},
	}
	before := ""
	for i, st := range steps {
		p.Waiting(st.why, st.notable)
		now := errOut.String()
		got := strings.TrimPrefix(now, before)
		before = now
		if st.want == "" {
			if got != "" {
				t.Errorf("step %d: Waiting(%q, %v) wrote %q, want nothing", i, st.why, st.notable, got)
			}
			continue
		}
		if want := "2026-11-30T14:00:00Z " + st.want; got != want {
			t.Errorf("step %d: Waiting(%q, %v) wrote %q, want %q", i, st.why, st.notable, got, want)
		}
	}
}

// On a terminal a notable wait goes into the bar's description, not a line
// of its own.
func TestProgressWaitingTTY(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	s.SetTTY(true, true)
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 5, Interval: time.Hour, Now: (&fakeClock{t: t0}).Now})
	p.Waiting("every account reached its daily cap", true)
	p.Sent()
	p.Stop()
	if got := errOut.String(); strings.Contains(got, "waiting: every account") || strings.Contains(got, "remaining") {
		t.Errorf("TTY progress wrote a plain line: %q", got)
	}
}
