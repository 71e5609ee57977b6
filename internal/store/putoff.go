package store

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/store/driver"
)

const (
	PutOffWindow driver.PutOff = 1 // its send window's next opening
	// PutOffReach: every number that could send to the row belongs to a
	// portfolio whose window is full (or is at its daily cap); the row
	// waits until the earliest of those windows makes room, and no claim
	// reads it meanwhile — nor counts it as a row its campaign could send
	// when campaigns take turns.
	PutOffReach driver.PutOff = 2
	// PutOffCap: the row's sticky number is at its daily cap; it is looked
	// at again a little later (a quota reset may come at any time).
	PutOffCap driver.PutOff = 3
)

// releaseHeld makes the rows held for the reach or a cap due again, and
// ends every campaign's idleness: the change being written (an account
// added or enabled, a limit raised, a new quota day) may make room before
// the instant they were held until.
func releaseHeld(ctx context.Context, tx *Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = 0, window_wait = ?
		WHERE window_wait >= ? AND state = 'pending'`, driver.PutOffNone, driver.PutOffReach); err != nil {
		return fmt.Errorf("release rows held for the reach or a cap: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET idle_until = 0 WHERE idle_until <> 0`); err != nil {
		return fmt.Errorf("end idle campaigns: %w", err)
	}
	return nil
}
