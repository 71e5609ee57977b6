package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
)

// Progress shows a campaign moving. The sender only adds to its counters; a
// timer renders them: a line redrawn in place on a terminal (fitted to its
// width, with log lines printed above it), a plain line every Interval when
// piped or run from cron, nothing when quiet.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer     // plain lines
	status  *StatusWriter // the redrawn line; nil when plain
	width   func() int
	label   string
	total   int
	done0   int // rows already finished before this run
	sent    int
	failed  int
	unknown int
	retries int
	// putBack counts rows this run counted as done that are open again
	// when it ends (a 131049 status webhook rescheduled a sent message).
	putBack int
	waitWhy string
	// stalled: the wait is notable (caps, no account): no rate or time
	// left is shown, as there is no pace to speak of.
	stalled  bool
	now      func() time.Time
	samples  []sample // recent (time, done) pairs: the current pace
	last     string   // the line last drawn
	interval time.Duration
	quit     chan struct{}
	wg       sync.WaitGroup
	quiet    bool
}

type sample struct {
	at   time.Time
	done int
}

// paceWindow is how far back the current pace is measured: long enough to
// smooth single sends, short enough that the burst a campaign starts with
// (buckets start full) soon stops counting.
const paceWindow = 15 * time.Second

// ProgressOptions configure NewProgress.
type ProgressOptions struct {
	Label string
	// Total rows in the campaign; Sent, Failed and Unknown already final.
	Total, Sent, Failed, Unknown int
	// Interval between plain lines. [10s]
	Interval time.Duration
	// Redraw is the interval between redraws on a terminal. [500ms]
	Redraw time.Duration
	Now    func() time.Time
}

// NewProgress starts rendering; call Stop when the run ends.
func NewProgress(s *IOStreams, o ProgressOptions) *Progress {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Redraw <= 0 {
		o.Redraw = 500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Progress{
		w: s.ErrOut, label: o.Label, total: o.Total, width: s.TerminalWidth,
		sent: o.Sent, failed: o.Failed, unknown: o.Unknown, done0: o.Sent + o.Failed + o.Unknown,
		now: o.Now, interval: o.Interval, quit: make(chan struct{}), quiet: s.Quiet,
	}
	p.samples = []sample{{o.Now(), p.done0}}
	if p.quiet {
		return p
	}
	tick := p.interval
	if s.IsStderrTTY() {
		p.status = s.Status()
		p.render()
		tick = o.Redraw
	}
	p.wg.Add(1)
	go p.loop(tick)
	return p
}

func (p *Progress) loop(tick time.Duration) {
	defer p.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			p.render()
		}
	}
}

// Sent, Failed, Unknown and Retry count one event each.
func (p *Progress) Sent()    { p.add(&p.sent) }
func (p *Progress) Failed()  { p.add(&p.failed) }
func (p *Progress) Unknown() { p.add(&p.unknown) }
func (p *Progress) Retry()   { p.add(&p.retries) }

// Settle sets the counts to those the database holds when the run ends,
// so that the last line agrees with the run's summary: a status webhook
// may have moved a row this run counted as sent — back to pending for a
// later retry (131049), or to failed. Rows no longer done show as "put
// back". (Other processes sending the campaign meanwhile raise the counts
// and can hide rows put back, never invent them.)
func (p *Progress) Settle(sent, failed, unknown int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if back := p.done() - (sent + failed + unknown); back > 0 {
		p.putBack += back
	}
	p.sent, p.failed, p.unknown = sent, failed, unknown
}

func (p *Progress) add(n *int) {
	p.mu.Lock()
	*n++
	p.mu.Unlock()
}

// Waiting says why nothing is being sent, or "" when sending again; notable
// marks a stall (caps, no account) rather than the normal pace. In plain
// mode a notable wait is logged at once, so a cron log tells when and why a
// campaign stalled; on a terminal any change redraws the line.
func (p *Progress) Waiting(why string, notable bool) {
	p.mu.Lock()
	changed := why != p.waitWhy
	p.waitWhy, p.stalled = why, notable && why != ""
	p.mu.Unlock()
	if !changed || p.quiet {
		return
	}
	if p.status != nil || notable {
		p.render()
	}
}

// Stop renders a last time and stops the timer.
func (p *Progress) Stop() {
	close(p.quit)
	p.wg.Wait()
	if p.quiet {
		return
	}
	p.render()
	if p.status != nil {
		_ = p.status.Done()
	}
}

func (p *Progress) render() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.samples = append(p.samples, sample{now, p.done()})
	for len(p.samples) > 2 && now.Sub(p.samples[0].at) > paceWindow && now.Sub(p.samples[1].at) >= MinRateSpan {
		p.samples = p.samples[1:]
	}
	if p.status == nil {
		fmt.Fprintf(p.w, "%s %s\n", now.Format(time.RFC3339), p.line())
		return
	}
	line := p.barLine(p.width())
	if line != p.last {
		_ = p.status.Set(line)
		p.last = line
	}
}

func (p *Progress) done() int { return p.sent + p.failed + p.unknown }

// pace is messages finished per second over the last paceWindow, and false
// when there is no pace to show: stalled, or too little time or nothing
// done.
func (p *Progress) pace() (float64, bool) {
	if p.stalled || len(p.samples) < 2 {
		return 0, false
	}
	first, last := p.samples[0], p.samples[len(p.samples)-1]
	return MeasuredRate(last.done-first.done, last.at.Sub(first.at))
}

// left is the time the remaining messages take at the current pace.
func (p *Progress) left(rate float64) (time.Duration, bool) {
	n := p.total - p.done()
	if n <= 0 {
		return 0, false
	}
	return time.Duration(float64(n) / rate * float64(time.Second)).Round(time.Second), true
}

func (p *Progress) counts() string {
	s := fmt.Sprintf("sent %d failed %d unknown %d", p.sent, p.failed, p.unknown)
	if p.putBack > 0 {
		s += fmt.Sprintf(" put back %d", p.putBack)
	}
	if p.retries > 0 {
		s += fmt.Sprintf(" retries %d", p.retries)
	}
	return s
}

func (p *Progress) line() string {
	s := fmt.Sprintf("%s: sent %d failed %d unknown %d", p.label, p.sent, p.failed, p.unknown)
	if p.putBack > 0 {
		s += fmt.Sprintf(" put back %d", p.putBack)
	}
	s += fmt.Sprintf(" remaining %d of %d", p.total-p.done(), p.total)
	if p.retries > 0 {
		s += fmt.Sprintf(" retries %d", p.retries)
	}
	if rate, ok := p.pace(); ok {
		s += " rate " + FormatRate(rate)
		if d, ok := p.left(rate); ok {
			s += " eta " + FormatDuration(d)
		}
	}
	switch {
	case strings.HasPrefix(p.waitWhy, "waiting "):
		s += " " + p.waitWhy // not "waiting: waiting for …"
	case p.waitWhy != "":
		s += " waiting: " + p.waitWhy
	}
	return s
}

// barLine is the terminal's line, at most width-1 columns (the last column
// would wrap on some terminals): label, bar, counts, pace, time left and
// what it waits for. To fit, a stall's bar narrows and goes first; the wait
// message is cut next (and goes, when it only says the pace holds it), then
// the bar narrows and goes, then the
// label is cut, then the time left, the wait message and the pace go; the
// counts are never cut.
func (p *Progress) barLine(width int) string {
	done := p.done()
	counts := fmt.Sprintf("%d/%d %s", done, p.total, p.counts())
	var rate, left string
	if r, ok := p.pace(); ok {
		rate = FormatRate(r)
		if d, ok := p.left(r); ok {
			left = FormatDuration(d) + " left"
		}
	}
	label, why := p.label, p.waitWhy
	barW := 30
	compose := func() string {
		var b strings.Builder
		if label != "" {
			b.WriteString(label + " ")
		}
		if barW > 0 {
			b.WriteString(renderBar(barW, done, p.total) + " ")
		}
		b.WriteString(counts)
		for _, s := range []string{rate, left, why} {
			if s != "" {
				b.WriteString(" · " + s)
			}
		}
		return b.String()
	}
	if width <= 0 {
		return compose()
	}
	room := width - 1
	over := func() int { return runewidth.StringWidth(compose()) - room }
	cut := func(s *string, floor int) {
		if n := over(); n > 0 && *s != "" {
			keep := max(runewidth.StringWidth(*s)-n, floor)
			if keep < 8 { // a stub says nothing
				*s = ""
			} else {
				*s = runewidth.Truncate(*s, keep, "…")
			}
		}
	}
	steps := []func(){
		func() {
			// A stall (caps, shared limits, no account) moves no bar: what
			// it waits for, and what ends the wait, matters more.
			if p.stalled && why != "" {
				barW = max(barW-over(), 10)
			}
		},
		func() {
			if p.stalled && why != "" && over() > 0 {
				barW = 0
			}
		},
		func() { cut(&why, 24) },
		func() {
			if !p.stalled {
				cut(&why, 0) // waiting for the next token is the pace itself: the bar says more
			}
		},
		func() { barW = max(barW-over(), 10) },
		func() { barW = 0 },
		func() { cut(&label, 16) },
		func() { cut(&why, 12) },
		func() { left = "" },
		func() { cut(&why, 0) },
		func() { rate = "" },
		func() { cut(&label, 0) },
	}
	for _, step := range steps {
		if over() <= 0 {
			break
		}
		step()
	}
	return compose()
}
