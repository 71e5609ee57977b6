package store

import (
	"context"
	"fmt"
)

// PutOff is why a claim moved a pending row's next_attempt_at, as
// messages.window_wait keeps it (the column was the send window's flag
// first). A claim takes the row with PutOffNone again; a row put off for
// the pair gap or a busy number, and a recorded retry time, are PutOffNone
// too.
type PutOff int

const (
	PutOffNone   PutOff = 0
	PutOffWindow PutOff = 1 // its send window's next opening
	// PutOffReach: every number that could send to the row belongs to a
	// portfolio whose window is full (or is at its daily cap); the row
	// waits until the earliest of those windows makes room, and no claim
	// reads it meanwhile — nor counts it as a row its campaign could send
	// when campaigns take turns.
	PutOffReach PutOff = 2
	// PutOffCap: the row's sticky number is at its daily cap; it is looked
	// at again a little later (a quota reset may come at any time).
	PutOffCap PutOff = 3
)

// releaseHeld makes the rows held for the reach or a cap due again, and
// ends every campaign's idleness: the change being written (an account
// added or enabled, a limit raised, a new quota day) may make room before
// the instant they were held until.
func releaseHeld(ctx context.Context, tx *Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = ?
		WHERE window_wait >= ? AND state = 'pending'`, PutOffNone, PutOffReach); err != nil {
		return fmt.Errorf("release rows held for the reach or a cap: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET idle_until = 0 WHERE idle_until <> 0`); err != nil {
		return fmt.Errorf("end idle campaigns: %w", err)
	}
	return nil
}
