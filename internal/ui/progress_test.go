package ui

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/golden"
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
	clk := clock.NewSim(t0)
	p := NewProgress(s, ProgressOptions{
		Label: "campaign 3", Total: 10, Sent: 2, Failed: 1, Unknown: 0,
		Interval: time.Millisecond, Now: clk.Now,
		Estimate: func() Estimate { return Estimate{Finish: t0.Add(12 * time.Second)} },
	})
	waitForOutput(t, &errOut, "2026-11-30T14:00:00Z campaign 3: sent=2 fail=1 left=7/10 eta=12s\n")

	clk.Advance(10 * time.Second)
	for range 4 {
		p.Sent()
	}
	p.Failed()
	p.Unknown()
	p.Retry()
	// 6 done in this run over 10 s: 0.6/s, 1 left; the estimate's finish
	// is 2 s ahead.
	waitForOutput(t, &errOut, "2026-11-30T14:00:10Z campaign 3: sent=6 fail=2 unk=1 left=1/10 retry=1 eta=2s\n")
	p.Stop()

	got := errOut.String()
	for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if !strings.HasPrefix(line, "2026-11-30T14:00:") || !strings.Contains(line, " campaign 3: sent=") {
			t.Errorf("line %d is not a plain progress line: %q", i+1, line)
		}
	}
	if n := len(got); n > 0 && got[n-1] != '\n' {
		t.Errorf("output does not end in a newline: %q", got)
	}
	last := got[strings.LastIndex(strings.TrimSuffix(got, "\n"), "\n")+1:]
	if want := "sent=6 fail=2 unk=1 left=1/10"; !strings.Contains(last, want) {
		t.Errorf("Stop's last line %q, want it to contain %q", last, want)
	}
	if strings.Contains(got, "\r") || strings.Contains(got, "\x1b") {
		t.Errorf("plain output has terminal control characters: %q", got)
	}
}

// TestProgressETARounded: the time left is the estimate's finish (the
// planner's, as status shows it) less now, rounded to the second — not
// the remaining rows at the current pace (issue 26: "21 min left" beside
// status's 9 days). A finish 1.67 s ahead is "eta 2 s"; a truncation to
// whole seconds before rounding shows "eta 1 s" (and "eta 0 s" under a
// second). The pace is shown beside it, and an estimate is shown when the
// pace is not known yet.
func TestProgressETARounded(t *testing.T) {
	tests := []struct {
		sent     int
		elapsed  time.Duration
		estimate *Estimate // nil: none given
		want     string
	}{
		{sent: 6, elapsed: 10 * time.Second, estimate: &Estimate{Finish: t0.Add(16670 * time.Millisecond)}, want: "left=4/10 rate=36/min eta=7s\n"},
		{sent: 9, elapsed: 15 * time.Second, estimate: &Estimate{Finish: t0.Add(16670 * time.Millisecond)}, want: "left=1/10 rate=36/min eta=2s\n"},
		{sent: 9, elapsed: 4500 * time.Millisecond, estimate: &Estimate{Finish: t0.Add(5 * time.Second)}, want: "left=1/10 rate=2/s eta=1s\n"},
		// Caps: the pace says minutes, the estimate days; the estimate wins.
		{sent: 5, elapsed: 10 * time.Second, estimate: &Estimate{Finish: t0.Add(9*24*time.Hour + 11*time.Hour)}, want: "left=5/10 rate=30/min eta=9d11h\n"},
		{sent: 5, elapsed: 10 * time.Second, estimate: &Estimate{Never: true}, want: "left=5/10 rate=30/min eta=never\n"},
		// Without an estimate no time left is guessed.
		{sent: 5, elapsed: 10 * time.Second, want: "left=5/10 rate=30/min\n"},
		// Over a span too short for a pace, the estimate alone.
		{sent: 5, elapsed: 2 * time.Millisecond, estimate: &Estimate{Finish: t0.Add(time.Minute)}, want: "left=5/10 eta=1m\n"},
	}
	for _, tt := range tests {
		var errOut syncBuffer
		s := Test(&bytes.Buffer{}, &errOut)
		clk := clock.NewSim(t0)
		o := ProgressOptions{Label: "c", Total: 10, Interval: time.Hour, Now: clk.Now}
		if tt.estimate != nil {
			o.Estimate = func() Estimate { return *tt.estimate }
		}
		p := NewProgress(s, o)
		for range tt.sent {
			p.Sent()
		}
		clk.Advance(tt.elapsed)
		p.refreshEstimate()
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
		p := NewProgress(s, ProgressOptions{Label: "c", Total: 3, Interval: time.Millisecond, Now: clock.NewSim(t0).Now})
		p.Sent()
		p.Waiting("capped", "every account reached its daily cap", true)
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
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 5, Interval: time.Hour, Now: clock.NewSim(t0).Now})
	defer p.Stop()

	// A notable wait's words go on a line of their own when they change;
	// the progress line carries its key.
	const head = "c: sent=0 left=5/5"
	steps := []struct {
		key, why string
		notable  bool
		want     []string // the lines written at once, after the timestamp; none for nothing
	}{
		{"tokens", "rate limit: waiting for the next token", false, nil},
		{"capped", "every account reached its daily cap", true, []string{"c: wait=capped every account reached its daily cap", head + " wait=capped"}},
		{"capped", "every account reached its daily cap", true, nil}, // unchanged: said already
		{"", "", false, nil},
		{"no-account", "no enabled account", true, []string{"c: wait=no-account no enabled account", head + " wait=no-account"}},
		{"limits", "waiting for shared limits: Redis does not answer", true, []string{"c: wait=limits waiting for shared limits: Redis does not\n    answer", head + " wait=limits"}},
	}
	before := ""
	for i, st := range steps {
		p.Waiting(st.key, st.why, st.notable)
		now := errOut.String()
		got := strings.TrimPrefix(now, before)
		before = now
		want := ""
		for _, l := range st.want {
			want += "2026-11-30T14:00:00Z " + l + "\n"
		}
		if got != want {
			t.Errorf("step %d: Waiting(%q, %q, %v) wrote %q, want %q", i, st.key, st.why, st.notable, got, want)
		}
	}
}

// On a terminal a notable wait goes into the bar's description, not a line
// of its own.
func TestProgressWaitingTTY(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	s.SetTTY(true, true)
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 5, Interval: time.Hour, Now: clock.NewSim(t0).Now})
	p.Waiting("capped", "every account reached its daily cap", true)
	p.Sent()
	p.Stop()
	if got := errOut.String(); strings.Contains(got, "waiting: every account") || strings.Contains(got, "remaining") {
		t.Errorf("TTY progress wrote a plain line: %q", got)
	}
}

// visible replays terminal output the way a terminal shows it, one screen
// line per redraw: "\r" returns to the line's start, "\x1b[K" clears to its
// end; each state of the line is kept, so the file reads as the sequence of
// redraws.
func visible(out string) string {
	var frames []string
	var cur []rune
	col := 0
	flush := func() { frames = append(frames, strings.TrimRight(string(cur), " ")) }
	for i := 0; i < len(out); i++ {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[K"):
			cur = cur[:col]
			i += 2
		case out[i] == '\r':
			if len(cur) > 0 {
				flush()
			}
			col = 0
		case out[i] == '\n':
			flush()
			cur, col = nil, 0
		default:
			r, size := utf8.DecodeRuneInString(out[i:])
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
			i += size - 1
		}
	}
	if len(cur) > 0 {
		flush()
	}
	return strings.Join(frames, "\n") + "\n"
}

// TestProgressGolden captures the terminal line through a campaign — a
// start, the normal pace, a wait for caps (no rate; the time left is the
// estimate's, which counts the quota days), a log line printed above the
// bar, a long label — at 80 and 120 columns: every frame fits, the counts
// are never cut, and the time left only ever counts down. Rewrite with
// -update.
func TestProgressGolden(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var errOut syncBuffer
			s := Test(&bytes.Buffer{}, &errOut)
			s.SetTTY(true, true)
			s.SetWidth(width)
			clk := clock.NewSim(t0)
			finish := t0.Add(2*24*time.Hour + 3*time.Hour)
			p := NewProgress(s, ProgressOptions{Label: "campaign 17", Total: 1200, Sent: 100,
				Interval: time.Hour, Redraw: time.Hour, Now: clk.Now,
				Estimate: func() Estimate { return Estimate{Finish: finish} }})
			step := func(d time.Duration, sent int) {
				clk.Advance(d)
				for range sent {
					p.Sent()
				}
				p.refreshEstimate()
				p.render()
			}
			step(time.Second, 1) // too soon for a pace
			p.Waiting("tokens", "rate limit: waiting for the next token", false)
			step(10*time.Second, 2)
			step(50*time.Second, 9) // 12 in a minute
			p.Failed()
			p.Retry()
			step(30*time.Second, 6)
			fmt.Fprintf(s.ErrOut, "time=2026-11-30T14:01:31Z level=WARN msg=\"account dropped\" account=fresh-02 code=190\n")
			p.Waiting("capped", "every account reached its daily cap; the next quota day opens at 00:00 (or `wasend quota reset --force` now)", true)
			step(time.Minute, 0)
			p.Waiting("", "", false)
			step(time.Minute, 30)
			p.Stop()
			got := visible(errOut.String())
			for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if w := runewidth.StringWidth(line); w >= width && !strings.HasPrefix(line, "time=") {
					t.Errorf("frame %d is %d columns wide at %d: %q", i+1, w, width, line)
				}
				if strings.HasPrefix(line, "time=") && strings.Contains(line, "[") {
					t.Errorf("log line glued to the bar: %q", line)
				}
			}
			goldenFile(t, fmt.Sprintf("progress_%d.golden", width), got)
		})
	}
}

// TestProgressLogAbove: on a terminal a log line written while the bar is
// shown clears the bar, prints whole, and the bar is drawn again after it.
func TestProgressLogAbove(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	s.SetTTY(true, true)
	s.SetWidth(80)
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 5, Interval: time.Hour, Redraw: time.Hour, Now: clock.NewSim(t0).Now})
	before := errOut.String()
	fmt.Fprint(s.ErrOut, "time=x level=WARN msg=hello\n")
	got := strings.TrimPrefix(errOut.String(), before)
	want := "\r\x1b[Ktime=x level=WARN msg=hello\n" + p.last
	if got != want {
		t.Errorf("log line written as %q, want %q", got, want)
	}
	p.Stop()
}

// TestProgressPlainStalled: while waiting on caps the plain line shows no
// rate (there is no pace to speak of), and without an estimate no ETA.
func TestProgressPlainStalled(t *testing.T) {
	var errOut syncBuffer
	s := Test(&bytes.Buffer{}, &errOut)
	clk := clock.NewSim(t0)
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 10, Interval: time.Hour, Now: clk.Now})
	for range 5 {
		p.Sent()
	}
	clk.Advance(10 * time.Second)
	p.Waiting("capped", "every account reached its daily cap", true)
	p.Stop()
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	for _, l := range lines {
		if strings.Contains(l, "rate") || strings.Contains(l, "eta") {
			t.Errorf("a stalled line shows a rate: %q", l)
		}
	}
	if want := "c: sent=5 left=5/10 wait=capped"; !strings.HasSuffix(lines[len(lines)-1], want) {
		t.Errorf("last line %q, want it to end %q", lines[len(lines)-1], want)
	}
}

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("..", "..", "testdata", "golden", name), got)
}

// On a narrow terminal everything but the counts gives way, a long label
// too; the counts stay whole.
func TestProgressNarrow(t *testing.T) {
	p := &Progress{label: "campaign 7 spring-sale-customers-2026.csv", total: 1200, sent: 148, failed: 1, retries: 1,
		waitWhy: "every account reached its daily cap", stalled: true}
	for _, width := range []int{40, 60, 80} {
		line := p.barLine(width)
		if w := runewidth.StringWidth(line); w >= width && line != "149/1200 sent 148 failed 1 unknown 0 retries 1" {
			t.Errorf("width %d: %d columns: %q", width, w, line) // only the counts may overflow
		}
		if !strings.Contains(line, "149/1200 sent 148 failed 1 unknown 0 retries 1") {
			t.Errorf("width %d: the counts are cut: %q", width, line)
		}
	}
}

func TestRenderBar(t *testing.T) {
	for _, tt := range []struct {
		width, done, total int
		want               string
	}{
		{10, 0, 40, "[          ]"},
		{10, 20, 40, "[=====     ]"},
		{10, 40, 40, "[==========]"},
		{10, 50, 40, "[==========]"}, // more done than total: full, not past the end
		{4, 1, 0, "[====]"},          // an empty campaign is complete
	} {
		if got := renderBar(tt.width, tt.done, tt.total); got != tt.want {
			t.Errorf("renderBar(%d, %d, %d) = %q, want %q", tt.width, tt.done, tt.total, got, tt.want)
		}
	}
}

// A stall's message says what ends it: at 80 columns the bar gives way
// before the message is cut, so the hint stays readable.
func TestProgressStalledHintFits(t *testing.T) {
	for _, tt := range []struct {
		why, want string
	}{
		{"Redis lost state: quota reset --force starts a quota day (`wasend limits status` says for which accounts)", "Redis lost state: quota reset --force"},
		{"waiting for shared limits: Redis does not answer; nothing is claimed until it does", "waiting for shared limits: Redis doe"},
	} {
		p := &Progress{label: "SANDBOX", total: 11, sent: 3, waitWhy: tt.why, stalled: true}
		line := p.barLine(80)
		if w := runewidth.StringWidth(line); w >= 80 {
			t.Errorf("%d columns: %q", w, line)
		}
		if !strings.Contains(line, tt.want) {
			t.Errorf("line %q does not say %q", line, tt.want)
		}
	}
}

// TestProgressSettle: a message this run counted as sent that a status
// webhook put back to pending (131049) leaves the sent count at the end,
// so the last line agrees with the database's counts (the summary); it
// shows as put back, and as remaining again.
func TestProgressSettle(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			var errOut syncBuffer
			s := Test(&bytes.Buffer{}, &errOut)
			s.SetTTY(tty, tty)
			s.SetWidth(120)
			clk := clock.NewSim(t0)
			p := NewProgress(s, ProgressOptions{Label: "campaign 3", Total: 34, Interval: time.Hour, Now: clk.Now})
			for range 34 {
				p.Sent()
			}
			p.Settle(33, 0, 0)
			p.Stop()
			got := errOut.String()
			last := got[strings.LastIndex(strings.TrimSuffix(got, "\n"), "\n")+1:]
			if i := strings.LastIndex(last, "\r"); i >= 0 {
				last = last[i+1:]
			}
			want := "sent=33 back=1 left=1/34"
			if tty {
				want = "33/34 sent 33 failed 0 unknown 0 put back 1"
			}
			if !strings.Contains(last, want) {
				t.Errorf("last line %q, want it to contain %q", last, want)
			}
		})
	}
}

// TestProgressJSONLines: --progress json writes a status object at once and
// on each tick — the counts, the pace, the estimate's seconds left (null
// when there is none), the wait — and a summary last, from the database's
// counts when it has them; never a plain or terminal line.
func TestProgressJSONLines(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var errOut syncBuffer
		s := Test(&bytes.Buffer{}, &errOut)
		s.SetTTY(tty, tty)
		clk := clock.NewSim(t0)
		finish := t0.Add(9*24*time.Hour + 11*time.Hour)
		p := NewProgress(s, ProgressOptions{Label: "campaign 4", Campaign: 4, Total: 10, Sent: 2, Interval: time.Hour, Now: clk.Now, JSON: true,
			Estimate: func() Estimate { return Estimate{Finish: finish} }})
		for range 4 {
			p.Sent()
		}
		p.Failed()
		clk.Advance(10 * time.Second)
		p.Waiting("capped", "every account reached its daily cap", true)
		p.SetStates(map[string]int{"pending": 3, "sending": 0, "sent": 6, "failed": 1, "unknown": 0, "expired": 0})
		p.Stop()
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		want := []string{
			`{"type":"status","time":"2026-11-30T14:00:00Z","campaign":4,"label":"campaign 4","percent_done":20,"total":10,"sent":2,"failed":0,"unknown":0,"pending":8,"put_back":0,"retries":0,"rate":0,"seconds_remaining":817200,"waiting":""}`,
			`{"type":"status","time":"2026-11-30T14:00:10Z","campaign":4,"label":"campaign 4","percent_done":70,"total":10,"sent":6,"failed":1,"unknown":0,"pending":3,"put_back":0,"retries":0,"rate":0,"seconds_remaining":817190,"waiting":"every account reached its daily cap"}`,
			`{"type":"summary","time":"2026-11-30T14:00:10Z","campaign":4,"label":"campaign 4","percent_done":70,"total":10,"sent":6,"failed":1,"unknown":0,"pending":3,"put_back":0,"retries":0,"expired":0,"counts":{"expired":0,"failed":1,"pending":3,"sending":0,"sent":6,"unknown":0}}`,
		}
		if !slices.Equal(lines, want) {
			t.Errorf("tty %v: lines\n%s\nwant\n%s", tty, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}

// An estimate is made again every EstimateEvery, or 20 times what the last
// one took when that is longer: a slow one (a million rows in a send
// window) must not take a core.
func TestProgressEstimateEvery(t *testing.T) {
	clk := clock.NewSim(t0)
	calls := 0
	s := Test(&bytes.Buffer{}, &bytes.Buffer{})
	s.Quiet = true
	p := NewProgress(s, ProgressOptions{Label: "c", Total: 10, Interval: time.Hour, Now: clk.Now,
		Estimate: func() Estimate { calls++; return Estimate{} }})
	defer p.Stop()
	for _, step := range []struct {
		after     time.Duration
		cost      time.Duration // what the last one took
		wantCalls int
	}{
		{0, 0, 1},
		{4 * time.Second, 0, 1},
		{5 * time.Second, 0, 2},
		{10 * time.Second, time.Second, 2},
		{24 * time.Second, time.Second, 2},
		{25 * time.Second, time.Second, 3},
	} {
		clk.Set(t0.Add(step.after))
		p.mu.Lock()
		if step.cost > 0 {
			p.estCost = step.cost
		}
		p.mu.Unlock()
		p.refreshEstimate()
		if calls != step.wantCalls {
			t.Errorf("at %v after a %v estimate: %d estimates, want %d", step.after, step.cost, calls, step.wantCalls)
		}
	}
}

// TestProgressPlainWidth: a plain line fits 80 columns for campaigns under
// 100,000 rows — a local time's offset, the runner's label, five-digit sent
// and left, the other counts small — and keeps every count that is not zero
// and a stall's key; what goes first is a wait that is not a stall, then
// the pace, then the total.
func TestProgressPlainWidth(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	days := Estimate{Finish: t0.Add(9*24*time.Hour + 11*time.Hour)}
	tests := []struct {
		name                                string
		label                               string
		total, sent, failed, unknown, retry int
		key                                 string
		stall                               bool
		est                                 Estimate
		zone                                *time.Location
		want                                string // the line after its timestamp
	}{
		{"small", "campaign 3", 10, 6, 2, 1, 1, "tokens", false, Estimate{Finish: t0.Add(time.Minute)}, zone,
			"campaign 3: sent=6 fail=2 unk=1 left=1 retry=1 eta=50s"},
		{"tokens", "campaign 12", 40, 26, 0, 0, 0, "tokens", false, Estimate{Finish: t0.Add(21*time.Hour + 20*time.Minute)}, time.UTC,
			"campaign 12: sent=26 left=14/40 rate=2.6/s eta=21h20m"},
		{"tokens fit", "c", 40, 26, 0, 0, 0, "tokens", false, Estimate{Finish: t0.Add(time.Minute)}, time.UTC,
			"c: sent=26 left=14/40 rate=2.6/s eta=50s wait=tokens"},
		{"capped", "campaign 12", 99999, 54321, 12, 0, 0, "capped", true, days, zone,
			"campaign 12: sent=54321 fail=12 left=45666 wait=capped"},
		{"no account", "campaign 12", 99999, 9999, 0, 0, 0, "no-account", true, Estimate{Never: true}, zone,
			"campaign 12: sent=9999 left=90000 wait=no-account"},
		{"sending", "campaign 12", 99999, 54321, 12, 0, 0, "tokens", false, Estimate{Finish: t0.Add(7*time.Hour + 36*time.Minute)}, zone,
			"campaign 12: sent=54321 fail=12 left=45666 eta=7h36m"},
		{"several counts", "campaign 12", 99999, 54321, 45, 3, 123, "tokens", false, Estimate{Finish: t0.Add(7*time.Hour + 36*time.Minute)}, time.UTC,
			"campaign 12: sent=54321 fail=45 unk=3 left=45630 retry=123"},
		{"outage", "SANDBOX", 99999, 88888, 1111, 0, 0, "outage", true, Estimate{Finish: t0.Add(23*time.Hour + 59*time.Minute)}, zone,
			"SANDBOX: sent=88888 fail=1111 left=10000 wait=outage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut syncBuffer
			s := Test(&bytes.Buffer{}, &errOut)
			clk := clock.NewSim(t0.In(tt.zone))
			p := NewProgress(s, ProgressOptions{Label: tt.label, Total: tt.total, Interval: time.Hour, Now: clk.Now,
				Estimate: func() Estimate { return tt.est }})
			p.mu.Lock()
			p.sent, p.failed, p.unknown, p.retries = tt.sent, tt.failed, tt.unknown, tt.retry
			p.mu.Unlock()
			clk.Advance(10 * time.Second)
			p.Waiting(tt.key, "every account reached its daily cap; the next quota day opens at 00:00 (or `wasend quota reset --force` now)", tt.stall)
			p.Stop()
			out := strings.TrimSuffix(errOut.String(), "\n")
			for _, line := range strings.Split(out, "\n") {
				if w := runewidth.StringWidth(line); w > 80 {
					t.Errorf("%d columns: %q", w, line)
				}
			}
			last := out[strings.LastIndex(out, "\n")+1:]
			if want := clk.Now().Format(time.RFC3339) + " " + tt.want; last != want {
				t.Errorf("last line\n%q, want\n%q", last, want)
			}
		})
	}
}
