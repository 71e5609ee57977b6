package claim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// begin is the claim's look at the campaign's schedule. Before the start
// it returns a WaitError (WaitScheduled) and claims nothing. The first
// claim after it records the campaign's start, and fixes the deadline of a
// campaign without a --at (one with a --at has it since it was set). Past
// the validity it expires every pending row — those waiting for a retry
// too — and returns the deadline otherwise, so a wait for a retry ends no
// later than it.
//
// Rows in flight at the deadline are let finish: their request may have
// been made. A row that comes back to pending afterwards expires at the
// next claim.
func begin(ctx context.Context, tx driver.ClaimTx, id int64, now time.Time) (deadline time.Time, w *campaign.Window, err error) {
	sc, err := tx.Schedule(ctx, id)
	if err != nil {
		return time.Time{}, nil, err
	}
	if !sc.StartAt.IsZero() && now.Before(sc.StartAt) {
		return time.Time{}, nil, &campaign.WaitError{Reason: campaign.WaitScheduled, Until: sc.StartAt}
	}
	expire, expires := sc.ExpireAfter, sc.ExpiresAt
	if sc.BeganAt.IsZero() {
		if expire > 0 && expires.IsZero() {
			expires = campaign.Schedule{ExpireAfter: expire}.Deadline(now)
		}
		if err := tx.Begin(ctx, id, now, expires); err != nil {
			return time.Time{}, nil, err
		}
	}
	if expire <= 0 || expires.IsZero() {
		return time.Time{}, sc.Window, nil
	}
	if now.Before(expires) {
		return expires, sc.Window, nil
	}
	if err := tx.ExpirePending(ctx, id, fmt.Sprintf("expired: not sent within %s of the campaign's start", expire), now); err != nil {
		return time.Time{}, nil, err
	}
	return time.Time{}, sc.Window, nil
}

// usableAccounts returns the enabled accounts not dropped from the
// campaign. When accounts exist but every one was dropped, it pauses the
// campaign and returns ErrNoUsableAccount.
func usableAccounts(ctx context.Context, tx driver.ClaimTx, campaignID int64) ([]driver.ClaimAccount, error) {
	accts, enabled, err := tx.Accounts(ctx, campaignID)
	if err != nil || len(accts) > 0 {
		return accts, err
	}
	if enabled == 0 {
		return nil, &campaign.WaitError{Reason: campaign.WaitNoAccount}
	}
	if err := tx.PauseNoAccount(ctx, campaignID); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", campaign.ErrPaused, campaign.ErrNoUsableAccount)
}

// dropSuppressed fails the rows whose number is on the suppression list —
// checked again just before sending, since a number may have been added
// since the import — and returns the others.
func dropSuppressed(ctx context.Context, tx driver.ClaimTx, due []driver.DueRow, now time.Time) ([]campaign.Message, error) {
	out := make([]campaign.Message, 0, len(due))
	for _, d := range due {
		if !d.Suppressed {
			out = append(out, d.Message)
			continue
		}
		why := d.Why
		if why == "" {
			why = "opted out"
		}
		if err := tx.FailSuppressed(ctx, d.ID, why, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nextDue returns up to max pending rows whose retry time has come, or the
// reason there are none: a wait for the next retry (for the send window,
// the reach or a cap when that row was held for it), for rows in flight,
// or campaign.ErrDone once the campaign is finished.
func nextDue(ctx context.Context, tx driver.ClaimTx, campaignID int64, w *campaign.Window, now time.Time, max int) ([]driver.DueRow, error) {
	due, err := tx.Due(ctx, campaignID, now, max)
	if err != nil || len(due) > 0 {
		return due, err
	}
	f, err := tx.FirstPending(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	switch {
	case !f.Next.IsZero():
		// Nothing can go before then but what the window, the portfolios
		// or the caps let through, when the first row was held for them.
		we := &campaign.WaitError{Reason: campaign.WaitRetry, Until: f.Next}
		switch f.Why {
		case driver.PutOffReach:
			we.Reason = campaign.WaitReach
		case driver.PutOffCap:
			we.Reason = campaign.WaitCapped
		case driver.PutOffWindow:
			if w != nil {
				we.Reason = campaign.WaitWindow
			}
		}
		return nil, we
	case f.Sending > 0:
		return nil, &campaign.WaitError{Reason: campaign.WaitInFlight}
	}
	if err := tx.FinishCampaign(ctx, campaignID, now); err != nil {
		return nil, err
	}
	return nil, campaign.ErrDone
}

// MaxHeldPerClaim bounds how many rows one claim moves to their window's
// next opening before it gives up the lock: when a big zone's window
// closes, its rows are moved over a few claims, each short.
const MaxHeldPerClaim = 2048

// nextDueInWindow is nextDue for a campaign with a send window (w): due
// rows outside their window are held until it opens, and the next due
// rows are looked at instead, until some can go now or MaxHeldPerClaim
// rows were held. Without a window it is nextDue.
func nextDueInWindow(ctx context.Context, tx driver.ClaimTx, id int64, w *campaign.Window, now time.Time, n int) ([]driver.DueRow, error) {
	if w == nil {
		return nextDue(ctx, tx, id, w, now, n)
	}
	total := 0
	for {
		due, err := nextDue(ctx, tx, id, w, now, n)
		if err != nil {
			return nil, err
		}
		open, held, err := holdOutsideWindow(ctx, tx, w, due, now)
		if err != nil {
			return nil, err
		}
		if len(open) > 0 {
			return open, nil
		}
		// Rows failed for a window that never opens count too: the loop
		// always moves on.
		if total += max(held, 1); total >= MaxHeldPerClaim {
			// Commit what was held, and look again at once.
			return nil, &campaign.WaitError{Reason: campaign.WaitWindow, Until: now}
		}
	}
}

// holdOutsideWindow returns the due rows whose recipients' window is open
// now. The others wait: their next_attempt_at moves to the window's next
// opening, so they leave the front of the messages_due index and stop
// blocking rows that can go now — each row is looked at once per closed
// stretch of its window, not on every claim. A row whose window is never
// open in all of its zones at once fails with the reason.
func holdOutsideWindow(ctx context.Context, tx driver.ClaimTx, w *campaign.Window, due []driver.DueRow, now time.Time) (open []driver.DueRow, held int, err error) {
	if len(due) == 0 {
		return due, 0, nil
	}
	ids := make([]int64, len(due))
	for i, d := range due {
		ids[i] = d.ID
	}
	zones, err := tx.Zones(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	var released []int64
	for _, d := range due {
		z := zones[d.ID]
		if z.Zones == "" {
			open = append(open, d) // imported before the window: no zone to judge by
			continue
		}
		locs, err := campaign.LoadZones(z.Zones) // cached by name
		if err != nil {
			return nil, 0, fmt.Errorf("message %d: %w", d.ID, err)
		}
		next, ok := w.Next(now, locs)
		switch {
		case !ok:
			if err := tx.FailNeverOpen(ctx, d.ID, fmt.Sprintf("send window %s is never open in all of the recipient's time zones (%s) at once",
				w, zoneNames(locs)), now); err != nil {
				return nil, 0, err
			}
		case next.After(now):
			if err := tx.PutOff(ctx, d.ID, next, driver.PutOffWindow); err != nil {
				return nil, 0, fmt.Errorf("hold message %d for its window: %w", d.ID, err)
			}
			held++
		default:
			if z.Waiting {
				released = append(released, d.ID)
			}
			open = append(open, d)
		}
	}
	if len(released) > 0 {
		if err := tx.ReleaseWindow(ctx, released); err != nil {
			return nil, 0, err
		}
	}
	return open, held, nil
}

func zoneNames(locs []*time.Location) string {
	names := make([]string, len(locs))
	for i, l := range locs {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}
