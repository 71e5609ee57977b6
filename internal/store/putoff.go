package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Why a claim moved a pending row's next_attempt_at, as messages.window_wait
// keeps it (the column was the send window's flag first). A claim takes the
// row with putOffNone again; deferMessage (the pair gap, a busy number) and
// a recorded retry time are putOffNone too.
const (
	putOffNone   = 0
	putOffWindow = 1 // its send window's next opening (holdOutsideWindow)
	// putOffReach: every number that could send to the row belongs to a
	// portfolio whose window is full (or is at its daily cap); the row
	// waits until the earliest of those windows makes room, and no claim
	// reads it meanwhile — nor counts it as a row its campaign could send
	// when campaigns take turns (takeTurn).
	putOffReach = 2
	// putOffCap: the row's sticky number is at its daily cap; it is looked
	// at again a little later (a quota reset may come at any time).
	putOffCap = 3
)

// maxHeldScan bounds the rows one claim reads while every row it reads is
// held: past it the claim ends (committing what it held) and the next one
// goes on at once.
const maxHeldScan = 1024

// capLookAgain is how long a row whose sticky number is at its cap waits
// before a claim looks at it again.
const capLookAgain = time.Minute

// holdRow puts off a due row until at, for why (putOffReach, putOffCap).
func holdRow(ctx context.Context, tx *Tx, id int64, at time.Time, why int) error {
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = ?, window_wait = ? WHERE id = ? AND state = 'pending'`,
		at.UnixNano(), why, id); err != nil {
		return fmt.Errorf("put off message %d: %w", id, err)
	}
	return nil
}

// reachOnly returns the gates that keep a row from every account when only
// the portfolios' reach does: each account is either closed to the
// recipient by its portfolio's full window (open false) or at its daily
// cap (window: each account's gate). nil when an open account may take the row once it has a token, or
// when no gate is closed.
func reachOnly(cands []ratelimit.Candidate, open []bool, window []int, gates []*reachGate) []*reachGate {
	var closed []*reachGate
	for i, c := range cands {
		if open[i] {
			if c.Used < c.DailyCap {
				return nil
			}
			continue
		}
		closed = append(closed, gates[window[i]])
	}
	return closed
}

// reachHolds are the rows a claim puts off for the portfolios' reach, each
// with the gates that refused it. They are written once the claim's own
// sends are logged: those may renew the window's oldest recipient, and so
// move the instant room opens.
type reachHolds struct {
	rows  []int64
	gates [][]*reachGate
}

func (h *reachHolds) add(id int64, gates []*reachGate) {
	h.rows, h.gates = append(h.rows, id), append(h.gates, gates)
}

// write puts each row off until the first of its gates makes room, after
// reading the gates' oldest recipients again when refresh is set, forgets
// them, and returns the earliest such instant (zero without rows).
func (h *reachHolds) write(ctx context.Context, tx *Tx, refresh bool) (time.Time, error) {
	if refresh {
		done := map[*reachGate]bool{}
		for _, gs := range h.gates {
			for _, g := range gs {
				if done[g] {
					continue
				}
				done[g] = true
				if err := g.findOldest(ctx, tx); err != nil {
					return time.Time{}, err
				}
			}
		}
	}
	var first time.Time
	for i, id := range h.rows {
		var until time.Time
		for _, g := range h.gates[i] {
			if f := ratelimit.FreesAt(g.oldest); until.IsZero() || f.Before(until) {
				until = f
			}
		}
		if err := holdRow(ctx, tx, id, until, putOffReach); err != nil {
			return time.Time{}, err
		}
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	h.rows, h.gates = h.rows[:0], h.gates[:0]
	return first, nil
}

// heldWait turns a wait for a retry time into a wait for the reach or the
// caps when the first row to come due was put off for them: nothing can go
// before then but what the portfolios or the caps let through.
func heldWait(ctx context.Context, tx *Tx, campaignID int64, we *campaign.WaitError) error {
	var why int
	err := tx.QueryRowContext(ctx, `SELECT window_wait FROM messages WHERE campaign_id = ? AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1`, campaignID).Scan(&why)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("campaign %d: %w", campaignID, err)
	}
	switch why {
	case putOffReach:
		we.Reason = campaign.WaitReach
	case putOffCap:
		we.Reason = campaign.WaitCapped
	}
	return nil
}

// releaseHeld makes the rows held for the reach or a cap due again, and
// ends every campaign's idleness: the change being written (an account
// added or enabled, a limit raised, a new quota day) may make room before
// the instant they were held until.
func releaseHeld(ctx context.Context, tx *Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = ?
		WHERE window_wait >= ? AND state = 'pending'`, putOffNone, putOffReach); err != nil {
		return fmt.Errorf("release rows held for the reach or a cap: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET idle_until = 0 WHERE idle_until <> 0`); err != nil {
		return fmt.Errorf("end idle campaigns: %w", err)
	}
	return nil
}
