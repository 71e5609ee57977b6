package ui

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
)

// Progress shows a campaign moving. The sender only adds to its counters; a
// timer renders them: a line redrawn in place on a terminal (fitted to its
// width, with log lines printed above it), a plain line every Interval when
// piped or run from cron, JSON objects with JSON set, nothing when quiet.
// The time left is the estimate it is given (status's ETA), never a guess
// from the pace.
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
	// waitKey names the wait in a plain line ("tokens", "capped", …);
	// saidWhy is the notable wait whose words a plain line last gave.
	waitKey, saidWhy string
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
	// The time left is the one estimate status shows (the planner's),
	// made at most every estEvery by the render loop: the line never
	// guesses from the pace.
	estimate func() Estimate
	est      Estimate
	estAt    time.Time // zero: none made yet
	estEvery time.Duration
	estCost  time.Duration // what the last estimate took, on the wall clock
	// JSON: one status object a line, a summary at the end (--progress json).
	json     bool
	campaign int64
	states   map[string]int // the database's counts by state at the end, for the summary
}

// Estimate is when the campaign will have finished, as `status` says.
type Estimate struct {
	Finish time.Time // zero: never with the current limits, or not known
	Never  bool      // it never finishes with the current limits
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
	// Estimate gives the campaign's finish (the planner's ETA, as status
	// shows it); it is called by the render loop, at most every
	// EstimateEvery [5s], never while a count is added. Nil: no time left
	// is shown.
	Estimate      func() Estimate
	EstimateEvery time.Duration
	// JSON writes one JSON object a line to stderr instead (Interval
	// [1s] apart): "status" lines, then one "summary" (docs/status.md).
	JSON     bool
	Campaign int64 // the campaign's id, in the JSON lines
}

// NewProgress starts rendering; call Stop when the run ends.
func NewProgress(s *IOStreams, o ProgressOptions) *Progress {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
		if o.JSON {
			o.Interval = time.Second
		}
	}
	if o.EstimateEvery <= 0 {
		o.EstimateEvery = 5 * time.Second
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
		estimate: o.Estimate, estEvery: o.EstimateEvery, json: o.JSON, campaign: o.Campaign,
	}
	p.samples = []sample{{o.Now(), p.done0}}
	if p.quiet {
		return p
	}
	// Before the sender starts, the first estimate can be waited for.
	p.refreshEstimate()
	tick := p.interval
	switch {
	case p.json:
		p.render() // a first status line at once: a run may end within a second
	case s.IsStderrTTY():
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
			p.refreshEstimate()
			p.render()
		}
	}
}

// estimateShare bounds the share of a core the estimates take: one that
// took a second (a million rows in a send window, stepped message by
// message) is made again 20 s later at the soonest.
const estimateShare = 20

// refreshEstimate asks for a new estimate when the last one is estEvery
// old, or estimateShare times what it took. Only the render loop calls
// it: the estimate reads the database, and the sender must not wait for
// that.
func (p *Progress) refreshEstimate() {
	if p.estimate == nil {
		return
	}
	p.mu.Lock()
	now := p.now()
	due := p.estAt.IsZero() || now.Sub(p.estAt) >= max(p.estEvery, estimateShare*p.estCost)
	p.mu.Unlock()
	if !due {
		return
	}
	began := time.Now()
	e := p.estimate()
	cost := time.Since(began)
	p.mu.Lock()
	p.est, p.estAt, p.estCost = e, now, cost
	p.mu.Unlock()
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

// Waiting says why nothing is being sent, or "" when sending again: key
// names it in a plain line (the dispatcher's reason: tokens, capped, …), why
// says it in words; notable marks a stall (caps, no account) rather than the
// normal pace. In plain mode a notable wait is logged at once, its words on
// a line of their own when they change, so a cron log tells when and why a
// campaign stalled; on a terminal any change redraws the line.
func (p *Progress) Waiting(key, why string, notable bool) {
	p.mu.Lock()
	changed := why != p.waitWhy
	p.waitKey, p.waitWhy, p.stalled = key, why, notable && why != ""
	if why == "" {
		p.waitKey = ""
	}
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
	if p.json {
		p.mu.Lock()
		p.writeJSON(p.summaryJSON(p.now()))
		p.mu.Unlock()
		return
	}
	// The sender has stopped: the last line may wait for a fresh estimate.
	p.mu.Lock()
	p.estAt = time.Time{}
	p.mu.Unlock()
	p.refreshEstimate()
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
	if p.json {
		p.writeJSON(p.statusJSON(now))
		return
	}
	if p.status == nil {
		stamp := now.Format(time.RFC3339)
		if p.stalled && p.waitWhy != p.saidWhy {
			fmt.Fprintln(p.w, p.detailLine(stamp))
		}
		p.saidWhy = p.waitWhy
		fmt.Fprintln(p.w, p.line(stamp))
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

// left is the time until the estimate's finish, rounded to the second,
// and false when there is none to show: nothing remains, no estimate was
// made yet, or it never finishes (never is then set).
func (p *Progress) left() (d time.Duration, ok, never bool) {
	if p.total-p.done() <= 0 || p.estAt.IsZero() {
		return 0, false, false
	}
	if p.est.Finish.IsZero() {
		return 0, false, p.est.Never
	}
	return max(p.est.Finish.Sub(p.now()), 0).Round(time.Second), true, false
}

// leftText is the time left as the line shows it, "" for none.
func (p *Progress) leftText() string {
	d, ok, never := p.left()
	switch {
	case never:
		return "never"
	case ok:
		return FormatDuration(d)
	}
	return ""
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

// plainWidth is what a plain line fits in: a cron log read in a terminal
// or a mail of 80 columns.
const plainWidth = 80

// line is a plain progress line: timestamp, label, then in the logfmt style
// of the piped log the counts (fail, unk, back and retry only when not
// zero), what is left of the total, the pace, the time left and the wait's
// key (a stall's words go on a line of their own, detailLine). To fit
// plainWidth a wait that is not a stall goes first (the next token: the
// pace itself), then the pace (the time left says more), then the total
// (sent, fail, unk and left add up to it), then a stall's time left (its
// words said when it ends), then the label is cut from the left (its end
// names the campaign) when that is enough, else the time left goes and
// then the label is cut. The counts and a stall's key
// stay: with several counts of five digits the line can be wider.
func (p *Progress) line(stamp string) string {
	rate, eta := "", ""
	if r, ok := p.pace(); ok {
		rate = "rate=" + compactRate(r)
	}
	if d, ok, never := p.left(); never {
		eta = "eta=never"
	} else if ok {
		eta = "eta=" + CompactDuration(d)
	}
	label, key, total := p.label, p.waitKey, fmt.Sprintf("/%d", p.total)
	compose := func() string {
		var b strings.Builder
		b.WriteString(stamp + " " + label + ":")
		field := func(s string) {
			if s != "" {
				b.WriteString(" " + s)
			}
		}
		count := func(key string, n int, always bool) {
			if n != 0 || always {
				field(fmt.Sprintf("%s=%d", key, n))
			}
		}
		count("sent", p.sent, true)
		count("fail", p.failed, false)
		count("unk", p.unknown, false)
		count("back", p.putBack, false)
		field(fmt.Sprintf("left=%d%s", p.total-p.done(), total))
		count("retry", p.retries, false)
		field(rate)
		field(eta)
		if key != "" {
			field("wait=" + key)
		}
		return b.String()
	}
	over := func() int { return runewidth.StringWidth(compose()) - plainWidth }
	steps := []func(){
		func() {
			if !p.stalled {
				key = "" // the next token is the pace itself: the rate says more
			}
		},
		func() { rate = "" },
		func() { total = "" },
		func() {
			if p.stalled {
				eta = ""
			}
		},
		func() {
			if keep := runewidth.StringWidth(label) - over(); keep >= 6 {
				label = cutLeft(label, keep) // enough on its own
			}
		},
		func() { eta = "" },
		func() { label = cutLeft(label, runewidth.StringWidth(label)-over()) },
	}
	for _, step := range steps {
		if over() <= 0 {
			break
		}
		step()
	}
	return compose()
}

// cutLeft keeps the last columns of s, at least 6, behind an ellipsis.
func cutLeft(s string, keep int) string {
	keep = max(keep, 6)
	if runewidth.StringWidth(s) <= keep {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && runewidth.StringWidth(string(r))+1 > keep {
		r = r[1:]
	}
	return "…" + string(r)
}

// detailLine is a notable wait's words on a line of their own, written
// when they change (the progress lines carry only its key), wrapped at
// plainWidth with the lines after the first indented.
func (p *Progress) detailLine(stamp string) string {
	return wrapIndented(stamp+" "+p.label+": wait="+p.waitKey+" "+p.waitWhy, plainWidth, "    ")
}

// wrapIndented breaks s at spaces into lines of at most width columns, the
// lines after the first starting with indent; a word longer than a line
// stays whole.
func wrapIndented(s string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(s) {
		w := runewidth.StringWidth(word)
		switch {
		case i == 0:
		case col+1+w > width:
			b.WriteString("\n" + indent)
			col = runewidth.StringWidth(indent)
		default:
			b.WriteString(" ")
			col++
		}
		b.WriteString(word)
		col += w
	}
	return b.String()
}

// compactRate is FormatRate without spaces, for a key=value field.
func compactRate(perSecond float64) string {
	switch {
	case !(perSecond > 0) || math.IsInf(perSecond, 0):
		return "0"
	case perSecond >= 1:
		return trimFloat(perSecond) + "/s"
	case perSecond*60 >= 1:
		return trimFloat(perSecond*60) + "/min"
	}
	return trimFloat(perSecond*3600) + "/h"
}

// CompactDuration is FormatDuration without spaces: 12s, 51m, 2h35m, 9d11h.
func CompactDuration(d time.Duration) string {
	return strings.NewReplacer(" min", "m", " s", "s", " h", "h", " d", "d", " ", "").Replace(FormatDuration(d))
}

// barLine is the terminal's line, at most width-1 columns (the last column
// would wrap on some terminals): label, bar, counts, pace, time left and
// what it waits for. To fit, a stall's bar narrows and goes first; the wait
// message is cut next (and goes, when it only says the pace holds it), then
// the bar narrows and goes, then the
// label is cut, then the pace, the wait message and the time left go; the
// counts are never cut.
func (p *Progress) barLine(width int) string {
	done := p.done()
	counts := fmt.Sprintf("%d/%d %s", done, p.total, p.counts())
	var rate, left string
	if r, ok := p.pace(); ok {
		rate = FormatRate(r)
	}
	if l := p.leftText(); l != "" {
		left = l + " left"
		if l == "never" {
			left = "never finishes"
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
		func() { rate = "" }, // the time left says more than the pace
		func() {
			if p.stalled {
				left = "" // what ends a stall says more than the time left
			}
		},
		func() { cut(&why, 0) },
		func() { left = "" },
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
