package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// waits is what a claim's loop put off or held, for the wait of a claim
// that admitted nothing.
type waits struct {
	now, deadline time.Time
	deferred      time.Time // the earliest row put off
	heldReach     time.Time // the earliest row held for the reach
	heldCap       time.Time // the earliest row held for a sticky number's cap
	skipped       int       // rows another host has
}

// refusal is what a gate that admitted nothing knows of why.
type refusal struct {
	// refused: a row was refused for the limits, not only put off (the
	// pair gap, a busy sticky number) or held.
	refused bool
	// The refusal the claim waits for: its rule, and when it ends.
	reason ratelimit.Reason
	until  time.Time
	// freed is when the first full portfolio that refused a recipient
	// makes room (zero: none refused).
	freed time.Time
}

// wait is the wait of a claim that admitted nothing, whichever gate
// refused: one computation for the local and the shared limits.
func (w waits) wait(ctx context.Context, tx driver.ClaimTx, campaignID int64, r refusal) error {
	if !r.refused {
		// Every row was put off: the pair gap, or a busy sticky number —
		// or, when none of those, a sticky number's full portfolio or cap.
		switch {
		case w.skipped > 0:
			// The batch went to rows another host has: the rows due
			// behind them may go now, not a poll later.
			return &campaign.WaitError{Reason: campaign.WaitRetry, Until: w.now}
		case w.deferred.IsZero() && !w.heldReach.IsZero():
			return &campaign.WaitError{Reason: campaign.WaitReach, Until: expireBy(w.heldReach, w.deadline)}
		case w.deferred.IsZero() && !w.heldCap.IsZero():
			return &campaign.WaitError{Reason: campaign.WaitCapped, Until: w.heldCap}
		}
		return &campaign.WaitError{Reason: campaign.WaitRetry, Until: expireBy(w.deferred, w.deadline)}
	}
	reason := campaign.WaitTokens
	switch r.reason {
	case ratelimit.ReasonCapped, ratelimit.ReasonEmpty, limits.ReasonReach:
		// Refused by every portfolio: as a pick among no number.
		reason = campaign.WaitCapped
	case ratelimit.ReasonGlobal:
		reason = campaign.WaitGlobal
	}
	until := r.until
	if reason != campaign.WaitCapped && !w.deferred.IsZero() && (until.IsZero() || w.deferred.Before(until)) {
		until = w.deferred
	}
	if !r.freed.IsZero() {
		// A portfolio that refused: its window makes room then, unless
		// rows put off come due before.
		switch {
		case reason == campaign.WaitCapped:
			reason, until = campaign.WaitReach, r.freed
			// Rows put off earlier (a sticky number's token, a retry
			// time, the pair gap) may be recipients the window holds:
			// wait for them first, so a run that stops at the limit stops
			// only when nothing else could go. Rows held for a window or
			// a cap wait for what this claim waits for.
			next, err := tx.NextPutOff(ctx, campaignID, w.now)
			if err != nil {
				return err
			}
			if !next.IsZero() && next.Before(r.freed) {
				reason, until = campaign.WaitRetry, next
			}
		case reason == campaign.WaitTokens && (until.IsZero() || r.freed.Before(until)):
			until = r.freed
		}
	}
	if reason == campaign.WaitRetry || reason == campaign.WaitReach {
		until = expireBy(until, w.deadline)
	}
	return &campaign.WaitError{Reason: reason, Until: until}
}

// expireBy is until, or the campaign's validity deadline when that comes
// first: rows put off past it (the pair gap, a full portfolio) expire then.
func expireBy(until, deadline time.Time) time.Time {
	if !deadline.IsZero() && (until.IsZero() || deadline.Before(until)) {
		return deadline
	}
	return until
}
