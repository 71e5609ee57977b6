package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/whatsapp"
)

// SharedReactions keeps one throttle reaction per number that every host
// sending from it feeds (--limits; hostshare.Sync is one). The hosts share
// the number's bucket, so the server sees what they send together: a
// reaction of one host alone would probe with its part of the rate only,
// and judge the probe by a share the others' rate holds up.
type SharedReactions interface {
	// FeedReaction passes this host's answers from the number (its
	// phone-number id) to the shared reaction and returns the factor it
	// last decided, and when (the zero time: never).
	FeedReaction(ctx context.Context, number string, answers []ratelimit.Answered) (factor float64, since time.Time, err error)
}

// reactions are the accounts' throttle reactions (ratelimit.Reaction). They
// live with the engine because it sees every answer, throttled or not:
// the share of throttled requests, and whether it falls with the rate, is
// known only here. Their verdicts ride on the outcomes to the ledger.
type reactions struct {
	mu sync.Mutex
	m  map[int64]*reaction
}

// reaction is one account's: its own, whose rests (a retry hint, a block)
// are this host's and, without shared reactions, whose factor is the
// account's; and with them, the answers not yet fed to the shared one.
type reaction struct {
	own     ratelimit.Reaction
	pending []ratelimit.Answered
	thr     bool // one of them was throttled
	fedAt   time.Time
	feeding bool
	seen    time.Time // the shared verdict the ledger has
}

// react feeds the server's answer to a claim (err nil: accepted) to its
// account's reaction and writes the verdict into out: the rest of a
// throttle (out.Throttle.Cooldown) and a new rate factor. An app-wide
// limit (error 4) rests every account for the hint, or the cooldown.
// Requests the server did not answer tell nothing of throttling.
func (e *Engine) react(ctx context.Context, c *campaign.Claim, err error, out *campaign.Outcome, now time.Time) {
	if err != nil {
		// Declared here: errors.As's target escapes, an allocation for
		// every answer if declared for the nil error too.
		var apiErr *whatsapp.APIError
		if !errors.As(err, &apiErr) {
			return
		}
	}
	t := out.Throttle
	if t != nil && t.Upgrade {
		if t.Hint > 0 {
			t.Cooldown = t.Hint
		}
		return
	}
	if t != nil && t.App {
		t.Cooldown = e.o.Cooldown
		if t.Hint > 0 {
			t.Cooldown = t.Hint
		}
		return
	}
	var hint time.Duration
	if t != nil {
		hint = t.Hint
	}
	shared := e.o.Reactions
	e.reactions.mu.Lock()
	r := e.reactions.m[c.Account.ID]
	if r == nil {
		if e.reactions.m == nil {
			e.reactions.m = make(map[int64]*reaction)
		}
		r = &reaction{own: ratelimit.NewReaction(1, now)}
		e.reactions.m[c.Account.ID] = r
	}
	v := r.own.Answer(now, t != nil, hint, e.o.Cooldown)
	var batch []ratelimit.Answered
	if shared != nil {
		r.pending = append(r.pending, ratelimit.Answered{At: now, Throttled: t != nil})
		r.thr = r.thr || t != nil
		if !r.feeding && ratelimit.FeedDue(r.fedAt, now, r.thr) {
			batch, r.pending, r.thr, r.feeding = r.pending, nil, false, true
		}
	}
	e.reactions.mu.Unlock()
	if t != nil {
		t.Cooldown = v.Rest
	}
	if shared == nil {
		out.RateFactor = v.Factor
		return
	}
	if batch == nil {
		return
	}
	f, since, ferr := shared.FeedReaction(ctx, c.Account.PhoneNumberID, batch)
	e.reactions.mu.Lock()
	defer e.reactions.mu.Unlock()
	r.feeding, r.fedAt = false, now
	// A feed that failed loses its answers (the shared windows weigh
	// fewer): Redis unreachable stops the shared limits' admissions too.
	if ferr == nil && !since.Equal(r.seen) {
		// Decided here or by another host: this host's claims offer the
		// gate the number's rate at it from now on.
		r.seen, out.RateFactor = since, f
	}
}
