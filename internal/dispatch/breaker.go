package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/whatsapp"
)

// ErrOutage is returned by Run (wrapped with campaign.ErrPaused) when the
// Cloud API did not answer any account for OutageTimeout: the campaign is
// paused, and nothing was failed for it.
var ErrOutage = errors.New("the Cloud API did not answer")

// tripAfter systemic failures in a row, with no answer from any account
// between them — from two accounts at least, or the only one this run
// used: one account's trouble while another rests is that account's —
// make the engine probe the API; if the probe gets no answer either, the
// breaker opens.
const tripAfter = 3

// breaker tells a systemic outage (connection errors and 5xx across every
// account) from a row's or an account's trouble. While it is open the
// engine claims nothing and probes the API with backoff; failed attempts
// of an outage cost no retry budget, so nothing is failed because the
// network was down.
type breaker struct {
	mu sync.Mutex
	// seen: accounts that sent in this run; failing: those with a
	// systemic failure since the last answer.
	seen, failing map[int64]bool
	streak        int       // systemic failures since the last answer
	streakSince   time.Time // the first of them
	probing       bool      // a worker is probing to confirm an outage
	open          bool
	since         time.Time // the outage began (first failure of the streak that tripped)
	lastErr       string
	probes        int // failed probes of this outage
	nextProbe     time.Time
}

func newBreaker() *breaker {
	return &breaker{seen: map[int64]bool{}, failing: map[int64]bool{}}
}

// reset forgets the streak: an answer came. Call with mu held. It runs
// for every answer, so an empty map is kept, not made anew.
func (b *breaker) reset() {
	b.open, b.streak = false, 0
	clear(b.failing)
}

// systemic reports whether err says nothing about the row or account: no
// connection, no answer, or a server error.
func systemic(err error) bool {
	if err == nil {
		return false // before errors.As's targets, which escape: one allocation each
	}
	var tr *whatsapp.TransportError
	if errors.As(err, &tr) {
		return true
	}
	var api *whatsapp.APIError
	return errors.As(err, &api) && api.HTTPStatus >= 500
}

// observe notes the answer (err) to an attempt of claim c. It reports
// whether the attempt's failure belongs to an outage and must not cost the
// row its retry budget: the one whose probe confirmed the outage, and every
// failure while a probe runs or the breaker is open. The failures before
// (at most tripAfter-1) are counted, as they would be without an outage,
// but never give a row up (givingUpInOutage); a row that alone keeps
// failing pays every time, as the probe gets an answer. Without a Probe there is no outage: every failure is the row's.
func (e *Engine) observe(ctx context.Context, c *campaign.Claim, err error) (free bool) {
	if e.o.Probe == nil {
		return false
	}
	b, now := e.breaker, e.o.Clock.Now()
	b.mu.Lock()
	b.seen[c.Account.ID] = true
	if !systemic(err) {
		b.reset()
		b.mu.Unlock()
		return false
	}
	b.lastErr = err.Error()
	if b.open || b.probing {
		b.mu.Unlock()
		return true
	}
	if b.streak == 0 {
		b.streakSince = now
	}
	b.streak++
	b.failing[c.Account.ID] = true
	check := !b.probing && b.streak >= tripAfter && len(b.failing) >= min(2, len(b.seen))
	b.probing = b.probing || check
	b.mu.Unlock()
	if !check {
		return free
	}
	perr := e.probe(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if perr == nil {
		// The API answers: this was no outage.
		b.reset()
		return false
	}
	b.lastErr = perr.Error()
	b.open, b.since, b.probes = true, b.streakSince, 1
	b.nextProbe = e.o.Clock.Now().Add(e.o.BackoffBase)
	return true
}

// givingUpInOutage reports whether out gives a row up (its last transient
// attempt) on a systemic failure while the Cloud API answers nobody: the
// breaker has not tripped yet (it needs tripAfter failures), so a probe
// decides. Only then is the row kept with its budget; a row that alone
// keeps failing while the API answers the probe gives up as before.
func (e *Engine) givingUpInOutage(ctx context.Context, err error, out campaign.Outcome) bool {
	if e.o.Probe == nil || !systemic(err) || out.Kind == campaign.OutcomeRetry || out.Class != whatsapp.ClassTransient.String() {
		return false
	}
	return e.probe(ctx) != nil
}

// state returns whether the breaker is open and, if so, the outage.
func (b *breaker) state() (bool, campaign.Outage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open, campaign.Outage{Since: b.since, Error: b.lastErr, NextProbe: b.nextProbe}
}

// probed notes a probe's result at now; after a failure the next probe
// waits twice as long as the last (base, doubling, up to max).
func (b *breaker) probed(err error, now time.Time, base, max time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		b.reset()
		return
	}
	b.lastErr = err.Error()
	wait := base << min(b.probes, 30)
	if wait <= 0 || wait > max {
		wait = max
	}
	b.probes++
	b.nextProbe = now.Add(wait)
}

// outageRetry turns the outcome of an outage's failed attempt into a retry
// at no cost: not failed, no retry budget spent, its quota given back. An
// ambiguous attempt stays unknown: its request may have been accepted.
func outageRetry(out campaign.Outcome, err error, now time.Time) campaign.Outcome {
	if out.Class != whatsapp.ClassTransient.String() {
		return out
	}
	if out.Kind != campaign.OutcomeRetry {
		// It would have given up: wait as long as the first retry does.
		out.RetryAt = now.Add(time.Second)
	}
	out.Kind, out.SpendsRetry, out.Refund = campaign.OutcomeRetry, false, true
	out.Class = ClassOutage
	out.Error = "Cloud API outage: " + errorText(err)
	return out
}

// waitOutage runs while the breaker is open: it records the outage for
// `status`, waits for the next probe, probes, and returns once the API
// answers again (nil), when ctx ends (ctx's error), or with ErrOutage once
// the outage lasted OutageTimeout (the campaign is then paused).
func (e *Engine) waitOutage(ctx, bg context.Context) error {
	o := e.o
	_, out := e.breaker.state()
	o.Observe(Event{Kind: EventOutage, At: o.Clock.Now(), Outage: &out})
	resumed := func() error {
		if err := o.Ledger.SetOutage(bg, o.Campaign.ID, campaign.Outage{}, ""); err != nil {
			return err
		}
		o.Observe(Event{Kind: EventResumed, At: o.Clock.Now()})
		return nil
	}
	for {
		if stop := e.stop.Load(); stop != nil {
			return *stop
		}
		now := o.Clock.Now()
		open, out := e.breaker.state()
		if !open {
			// A request still in flight got an answer.
			return resumed()
		}
		if now.Sub(out.Since) >= o.OutageTimeout {
			reason := fmt.Sprintf("Cloud API outage: no account had an answer for %s (last error: %s); resume it when the API answers again",
				o.OutageTimeout, out.Error)
			if err := o.Ledger.SetOutage(bg, o.Campaign.ID, out, reason); err != nil {
				return err
			}
			o.Observe(Event{Kind: EventPaused, At: now, Outcome: campaign.Outcome{Pause: reason}})
			return fmt.Errorf("%w: %w: %s", ErrOutage, campaign.ErrPaused, reason)
		}
		// Never sleep past the timeout.
		next := out.NextProbe
		if deadline := out.Since.Add(o.OutageTimeout); deadline.Before(next) {
			next = deadline
		}
		if err := o.Ledger.SetOutage(bg, o.Campaign.ID, campaign.Outage{Since: out.Since, Error: out.Error, NextProbe: next}, ""); err != nil {
			return err
		}
		// Waits are cut at Poll so that a pause or cancel from another
		// shell is seen within it.
		if wait := min(next.Sub(now), o.Poll); wait > 0 {
			select {
			case <-o.Clock.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		err := e.probe(bg)
		e.breaker.probed(err, o.Clock.Now(), o.BackoffBase, o.BackoffMax)
		if err != nil {
			_, out = e.breaker.state()
			o.Observe(Event{Kind: EventOutage, At: o.Clock.Now(), Outage: &out})
			continue
		}
		return resumed()
	}
}

// probe asks the API whether it answers: Options.Probe, where a Graph
// answer of any kind below 500 counts as an answer.
func (e *Engine) probe(ctx context.Context) error {
	err := e.o.Probe(ctx)
	if err != nil && !systemic(err) {
		return nil
	}
	return err
}
