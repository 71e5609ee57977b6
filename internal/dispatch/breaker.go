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

// tripAfter systemic failures in a row, from every account that sent in
// this run, open the breaker.
const tripAfter = 3

// breaker tells a systemic outage (connection errors and 5xx across every
// account) from a row's or an account's trouble. While it is open the
// engine claims nothing and probes the API with backoff; failed attempts
// of an outage cost no retry budget, so nothing is failed because the
// network was down.
type breaker struct {
	mu sync.Mutex
	// seen: accounts that sent in this run; failing: those whose every
	// answer since the last healthy one was systemic.
	seen, failing map[int64]bool
	streak        int       // systemic failures since the last healthy answer
	streakSince   time.Time // the first of them
	open          bool
	since         time.Time // the outage began (first failure of the streak that tripped)
	lastErr       string
	probes        int // failed probes of this outage
	nextProbe     time.Time
}

func newBreaker() *breaker {
	return &breaker{seen: map[int64]bool{}, failing: map[int64]bool{}}
}

// systemic reports whether err says nothing about the row or account: no
// connection, no answer, or a server error.
func systemic(err error) bool {
	var tr *whatsapp.TransportError
	if errors.As(err, &tr) {
		return true
	}
	var api *whatsapp.APIError
	return errors.As(err, &api) && api.HTTPStatus >= 500
}

// observe notes the answer (err) to an attempt of account at now. It
// reports whether the attempt's failure belongs to an outage and must not
// cost the row its retry budget: every systemic failure after the first
// since a healthy answer (a row that alone keeps failing still pays, as
// each of its failures follows others' healthy answers), and all while the
// breaker is open.
func (b *breaker) observe(account int64, err error, now time.Time) (free bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen[account] = true
	if !systemic(err) {
		// An answer, even during an outage: the API is back.
		b.open, b.streak, b.failing = false, 0, map[int64]bool{}
		return false
	}
	b.lastErr = err.Error()
	if b.open {
		return true
	}
	free = b.streak > 0
	if b.streak == 0 {
		b.streakSince = now
	}
	b.streak++
	b.failing[account] = true
	if b.streak >= tripAfter && len(b.failing) == len(b.seen) {
		b.open, b.since, b.probes, b.nextProbe = true, b.streakSince, 0, now
	}
	return free
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
		b.open, b.streak, b.failing = false, 0, map[int64]bool{}
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
	out.Kind, out.RetryAt, out.SpendsRetry, out.Refund = campaign.OutcomeRetry, now, false, true
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
		if wait := next.Sub(now); wait > 0 {
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
	if e.o.Probe == nil {
		return nil // no probe: let the next claims find out
	}
	err := e.o.Probe(ctx)
	if err != nil && !systemic(err) {
		return nil
	}
	return err
}
