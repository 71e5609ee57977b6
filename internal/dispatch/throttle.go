package dispatch

import (
	"errors"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/whatsapp"
)

// reactions are the accounts' throttle reactions (ratelimit.Reaction). They
// live with the engine because it sees every answer, throttled or not:
// the share of throttled requests, and whether it falls with the rate, is
// known only here. Their verdicts ride on the outcomes to the ledger.
type reactions struct {
	mu sync.Mutex
	m  map[int64]*ratelimit.Reaction
}

// react feeds the server's answer to a claim (err nil: accepted) to its
// account's reaction and writes the verdict into out: the rest of a
// throttle (out.Throttle.Cooldown) and a new rate factor. An app-wide
// limit (error 4) rests every account for the hint, or the cooldown.
// Requests the server did not answer tell nothing of throttling.
func (e *Engine) react(c *campaign.Claim, err error, out *campaign.Outcome, now time.Time) {
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
	e.reactions.mu.Lock()
	r := e.reactions.m[c.Account.ID]
	if r == nil {
		if e.reactions.m == nil {
			e.reactions.m = make(map[int64]*ratelimit.Reaction)
		}
		nr := ratelimit.NewReaction(1, now)
		r = &nr
		e.reactions.m[c.Account.ID] = r
	}
	v := r.Answer(now, t != nil, hint, e.o.Cooldown)
	e.reactions.mu.Unlock()
	if t != nil {
		t.Cooldown = v.Rest
	}
	out.RateFactor = v.Factor
}
