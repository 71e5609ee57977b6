package ui

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress shows a campaign moving. The sender only adds to its counters; a
// timer renders them: a bar on a terminal, a plain line every Interval when
// piped or run from cron, nothing when quiet.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int
	done0    int // rows already finished before this run
	sent     int
	failed   int
	unknown  int
	retries  int
	waitWhy  string
	start    time.Time
	now      func() time.Time
	bar      *progressbar.ProgressBar
	interval time.Duration
	quit     chan struct{}
	wg       sync.WaitGroup
	quiet    bool
}

// ProgressOptions configure NewProgress.
type ProgressOptions struct {
	Label string
	// Total rows in the campaign; Sent, Failed and Unknown already final.
	Total, Sent, Failed, Unknown int
	// Interval between plain lines. [10s]
	Interval time.Duration
	Now      func() time.Time
}

// NewProgress starts rendering; call Stop when the run ends.
func NewProgress(s *IOStreams, o ProgressOptions) *Progress {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Progress{
		w: s.ErrOut, label: o.Label, total: o.Total,
		sent: o.Sent, failed: o.Failed, unknown: o.Unknown, done0: o.Sent + o.Failed + o.Unknown,
		start: o.Now(), now: o.Now, interval: o.Interval, quit: make(chan struct{}), quiet: s.Quiet,
	}
	if p.quiet {
		return p
	}
	tick := p.interval
	if s.IsStderrTTY() {
		p.bar = progressbar.NewOptions(o.Total,
			progressbar.OptionSetWriter(s.ErrOut),
			progressbar.OptionSetDescription(p.describe()),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionEnableColorCodes(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(s.ErrOut) }),
		)
		_ = p.bar.Set(p.done0)
		tick = 500 * time.Millisecond
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

func (p *Progress) add(n *int) {
	p.mu.Lock()
	*n++
	p.mu.Unlock()
}

// Waiting says why nothing is being sent, or "" when sending again. In
// plain mode a notable wait (caps, no account) is logged at once, so a cron
// log tells when and why a campaign stalled; waiting for the next token is
// the normal pace and only shows in the periodic line.
func (p *Progress) Waiting(why string, notable bool) {
	p.mu.Lock()
	changed := why != p.waitWhy
	p.waitWhy = why
	p.mu.Unlock()
	if changed && notable && p.bar == nil && !p.quiet {
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
	if p.bar != nil {
		p.render()
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
		return
	}
	p.render()
}

func (p *Progress) render() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Describe(p.describe())
		_ = p.bar.Set(p.sent + p.failed + p.unknown)
		return
	}
	fmt.Fprintf(p.w, "%s %s\n", p.now().Format(time.RFC3339), p.line())
}

func (p *Progress) describe() string {
	s := fmt.Sprintf("%s sent %d failed %d unknown %d", p.label, p.sent, p.failed, p.unknown)
	if p.waitWhy != "" {
		s += " · " + p.waitWhy
	}
	return s
}

func (p *Progress) line() string {
	done := p.sent + p.failed + p.unknown
	s := fmt.Sprintf("%s: sent %d failed %d unknown %d remaining %d of %d",
		p.label, p.sent, p.failed, p.unknown, p.total-done, p.total)
	if p.retries > 0 {
		s += fmt.Sprintf(" retries %d", p.retries)
	}
	elapsed := p.now().Sub(p.start)
	if n := done - p.done0; n > 0 && elapsed > 0 {
		rate := float64(n) / elapsed.Seconds()
		s += fmt.Sprintf(" rate %.2f/s", rate)
		if left := p.total - done; left > 0 {
			s += " eta " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String()
		}
	}
	if p.waitWhy != "" {
		s += " waiting: " + p.waitWhy
	}
	return s
}
