package dispatch

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/clock"
)

// Concurrency decides how many requests may be in flight. Little's law
// says a server answering in R seconds needs rate × R requests in flight
// to carry rate messages per second, so the limit follows what the
// accounts may send (SetRate) times the latency measured on the answers,
// with headroom for bursts and jitter. An AIMD guard caps it, round by
// round (a round is one latency long): many requests failing or timing out
// cut the cap to half of what was in flight; answers much slower than the
// recent baseline while the tokens paced sending (TokensPaced) cut it to
// three quarters; slow answers otherwise hold it; a quiet round grows it
// back by a step. The result stays within [min, max].
//
// Slower answers cut only while the tokens pace sending. When the limit
// itself holds sending back (tiers faster than the server), Little's law
// is read the other way: the throughput achieved times the baseline
// latency is what the server can take without a queue; the cap grows to
// that with headroom plus boundSpare and no further, since more in flight
// would only lengthen the queue (and the memory held by it). A distant
// server has a baseline near its latency, so this leaves room to grow; a
// loopback one answers in microseconds without a queue, so it keeps
// about boundSpare in flight.
//
// It is not safe for concurrent use and never reads a clock: every method
// takes the time, so tests step it through named instants.
type Concurrency struct {
	max, min int
	rate     float64       // messages/s the ledger may hand out; +Inf: unlimited or not yet known
	srtt     time.Duration // smoothed latency; 0 before the first answer
	cap      float64       // the AIMD guard; starts at max

	// base is the lowest smoothed latency of the last one to two
	// baseWindows: what "slower than usual" is measured against. A server
	// that stays slow becomes the new usual after at most two windows.
	baseCur, basePrev time.Duration
	baseSince         time.Time

	round        time.Time // start of the current round; zero before the first answer
	answers, bad int       // in the current round
	paced        bool      // the tokens paced sending during the current round
	// Until the first round ends the controller knows little. If no
	// claim has waited for tokens yet, it starts like TCP's slow start:
	// slowStart plus one per answer.
	ended, pacedEver bool
	answered         int
}

// Tuning of Concurrency. They are named for what they mean, not tuned to
// a benchmark: a margin of half again for bursts and jitter, a few spare
// requests for small rates, TCP's halving on loss.
const (
	littleHeadroom = 1.5
	littleSpare    = 8
	srttWeight     = 1.0 / 8 // of a new answer in the smoothed latency (TCP's)
	baseWindow     = 30 * time.Second
	slowFactor     = 2.0  // answers this much slower than the baseline count as a slowing server
	badShare       = 0.1  // failed or timed-out share of a round that counts as distress
	cutOnErrors    = 0.5  // the cap after a round of errors, as a share of what was in flight
	cutOnSlow      = 0.75 // the same after a round of slow answers
	growRounds     = 8    // quiet rounds to grow the cap back by the Little's-law limit
	minRound       = 10 * time.Millisecond
	// boundSpare is what stays in flight beyond what the server takes
	// without a queue, when the limit binds. The recorder's transactions
	// take about as many rows as are in flight, and a commit has a fixed
	// cost (some 25 statements, the WAL's pages): at 64 they held ~76 rows
	// on loopback; at 192, ~200 rows and ~8 % less CPU per message, for
	// ~35 MiB more (bench/throughput.sh; the commit that set 192 has the runs).
	boundSpare = 192
	slowStart  = 64 // in flight before the first answers, unless the tokens paced sending
)

// DefaultMaxInFlight is the upper bound of requests in flight when
// Options.Workers is not set: ten numbers at 80 msg/s against a server
// answering in 2 s need 1,600.
const DefaultMaxInFlight = 2048

// NewConcurrency returns a controller allowing at most max requests in
// flight (at least one). Until it knows a rate and a latency it allows
// max while the tokens pace sending (a server answering in seconds needs
// it all before the first answer), and slow-starts otherwise.
func NewConcurrency(max int) *Concurrency {
	max = int(math.Max(float64(max), 1))
	return &Concurrency{max: max, min: min(4, max), rate: math.Inf(1), cap: float64(max)}
}

// SetRate tells the controller how many messages per second the accounts
// may send now (math.Inf(1) when unlimited).
func (c *Concurrency) SetRate(rate float64) {
	if rate < 0 || math.IsNaN(rate) {
		rate = 0
	}
	c.rate = rate
}

// Limit is how many requests may be in flight.
func (c *Concurrency) Limit() int {
	l := math.Min(c.unguarded(), c.cap)
	if !c.ended && !c.pacedEver {
		l = math.Min(l, float64(slowStart+c.answered))
	}
	return max(int(l), c.min)
}

// unguarded is the Little's-law limit within max, before the guard.
func (c *Concurrency) unguarded() float64 {
	if c.srtt == 0 || math.IsInf(c.rate, 1) {
		return float64(c.max)
	}
	return math.Min(c.rate*c.srtt.Seconds()*littleHeadroom+littleSpare, float64(c.max))
}

// Answer records one answer that took latency, with inFlight requests
// (this one included) outstanding when it came, and whether it failed in a
// way that tells of a struggling server (a server error, a timeout, a
// dropped connection).
func (c *Concurrency) Answer(now time.Time, latency time.Duration, inFlight int, failed bool) {
	if latency < 0 {
		latency = 0
	}
	if c.srtt == 0 {
		c.srtt = latency
	} else {
		c.srtt += time.Duration(srttWeight * float64(latency-c.srtt))
	}
	c.noteBase(now)
	if c.round.IsZero() {
		c.round = now
	}
	c.answers++
	c.answered++
	if failed {
		c.bad++
	}
	if now.Sub(c.round) < max(c.srtt, minRound) {
		return
	}
	c.endRound(now, inFlight)
}

// endRound applies the guard to the round that just ended.
func (c *Concurrency) endRound(now time.Time, inFlight int) {
	slow := c.base() > 0 && c.srtt > time.Duration(slowFactor*float64(c.base()))
	switch {
	case float64(c.bad) > badShare*float64(c.answers):
		c.cap = math.Max(float64(c.min), math.Min(c.cap, float64(inFlight))*cutOnErrors)
	case slow && c.paced:
		c.cap = math.Max(float64(c.min), math.Min(c.cap, float64(inFlight))*cutOnSlow)
	case !c.paced:
		grown := c.cap + math.Max(1, c.unguarded()/growRounds)
		noQueue := float64(c.answers)/now.Sub(c.round).Seconds()*c.base().Seconds()*littleHeadroom + boundSpare
		c.cap = math.Max(float64(c.min), math.Min(math.Min(grown, noQueue), float64(c.max)))
	default:
		c.cap = math.Min(float64(c.max), c.cap+math.Max(1, c.unguarded()/growRounds))
	}
	c.round, c.answers, c.bad, c.paced, c.ended = now, 0, 0, false, true
}

// TokensPaced notes that the accounts' tokens, not this limit, held
// sending back in the current round: a claim had to wait for them.
func (c *Concurrency) TokensPaced() { c.paced, c.pacedEver = true, true }

// noteBase keeps the lowest smoothed latency of the current and the last
// window.
func (c *Concurrency) noteBase(now time.Time) {
	if c.baseSince.IsZero() || now.Sub(c.baseSince) >= baseWindow {
		c.basePrev, c.baseCur, c.baseSince = c.baseCur, c.srtt, now
		return
	}
	c.baseCur = min(c.baseCur, c.srtt)
}

func (c *Concurrency) base() time.Duration {
	if c.basePrev == 0 {
		return c.baseCur
	}
	return min(c.basePrev, c.baseCur)
}

// Latency is the smoothed latency of the answers so far (0 before one).
func (c *Concurrency) Latency() time.Duration { return c.srtt }

// pacer holds the engine's two windows — rows claimed and not yet
// recorded (at most twice the limit: claims run one pool ahead of the
// senders) and requests in flight (at most the limit) — sized by a
// Concurrency. It is safe for concurrent use.
type pacer struct {
	clock clock.Clock
	mu    sync.Mutex
	ctl   *Concurrency
	limit int
	// claimed counts rows claimed (or being claimed) and not yet
	// recorded; sending counts requests in flight.
	claimed, sending int
	// Waiters for room to claim rows (reserve) and to start requests
	// (startSends), woken apart: a request ending wakes no claim.
	claimRoom, sendRoom waker
	// alone holds the limit at one request until an answer accepts a
	// message: until then nothing proves that the campaign's requests are
	// right, and an error that holds for every row (a template's) must
	// cost one request, not a window of them.
	alone bool
}

func newPacer(clk clock.Clock, max int) *pacer {
	ctl := NewConcurrency(max)
	return &pacer{clock: clk, ctl: ctl, limit: 1, alone: true}
}

// accepted notes that a message was accepted: the limit is the
// controller's from now on.
func (p *pacer) accepted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.alone {
		p.alone = false
		p.resize()
	}
}

// Limit is the current limit of requests in flight.
func (p *pacer) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit
}

// tokensPaced tells the controller a claim waited for tokens.
func (p *pacer) tokensPaced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctl.TokensPaced()
	p.resize()
}

// setRate passes the accounts' allowed rate to the controller.
func (p *pacer) setRate(rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctl.SetRate(rate)
	p.resize()
}

// resize takes the controller's limit; the caller holds mu.
func (p *pacer) resize() {
	l := p.ctl.Limit()
	if p.alone {
		l = 1
	}
	if l > p.limit {
		p.claimRoom.wake()
		p.sendRoom.wake()
	}
	p.limit = l
}

// waker wakes the goroutines waiting for a change; its pacer's mu guards
// it. A change nobody waits for costs nothing.
type waker struct {
	ch chan struct{} // closed by wake; nil while nobody waits
}

// wait returns the channel wake closes.
func (w *waker) wait() <-chan struct{} {
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// wake wakes every waiter.
func (w *waker) wake() {
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// reserve waits until rows may be claimed, then reserves up to n (at least
// one) and says how many.
func (p *pacer) reserve(ctx context.Context, n int) (int, error) {
	for {
		p.mu.Lock()
		room := 2*p.limit - p.claimed
		if room > 0 {
			got := min(room, n)
			p.claimed += got
			p.mu.Unlock()
			return got, nil
		}
		wake := p.claimRoom.wait()
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// grab reserves up to n more rows without waiting and says how many.
func (p *pacer) grab(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := max(min(2*p.limit-p.claimed, n), 0)
	p.claimed += got
	return got
}

// handOn says how many of k rows being recorded may pass their places to
// new claims: all of them, unless the limit shrank meanwhile.
func (p *pacer) handOn(k int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(min(k, 2*p.limit-(p.claimed-k)), 0)
}

// release gives back n reserved rows: recorded, or never claimed.
func (p *pacer) release(n int) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claimed -= n
	p.claimRoom.wake()
}

// held is how many rows are reserved.
func (p *pacer) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claimed
}

// startSends waits for room in flight, takes up to n places (at least
// one) and returns how many with the time the requests may start. A
// cancelled ctx takes none: it returns 0 and ctx's error, for the caller
// to put its claims back.
func (p *pacer) startSends(ctx context.Context, n int) (int, time.Time, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, time.Time{}, err
		}
		got, wake := p.startNow(max(n, 1))
		if got > 0 {
			return got, p.clock.Now(), nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}

// startNow takes up to n places in flight free now, without waiting, and
// says how many; with none, wake is closed once one may be free. The
// recorder's claims along that take them are marked started in their
// claim's transaction and go at once.
func (p *pacer) startNow(n int) (got int, wake <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if got = max(min(p.limit-p.sending, n), 0); got == 0 {
		wake = p.sendRoom.wait()
	}
	p.sending += got
	return got, wake
}

// endSend gives back a place taken at start. answered is false when no
// request was made; failed marks an answer that tells of a struggling
// server.
func (p *pacer) endSend(start time.Time, answered, failed bool) {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if answered {
		p.ctl.Answer(now, now.Sub(start), p.sending, failed)
	}
	p.sending--
	p.resize()
	p.sendRoom.wake()
}
