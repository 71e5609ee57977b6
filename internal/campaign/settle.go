package campaign

import "time"

// StatusRow is what a status's meaning depends on in the message it
// matched, as the store reads the row when the status applies.
type StatusRow struct {
	ID    int64 // the row's id (where a store reads it)
	State State
	// WAMID is the wamid the row carries; "" for none (an answer without
	// one is never recorded).
	WAMID      string
	Delivery   Delivery
	CampaignID int64
	Cancelled  bool  // its campaign was cancelled
	AccountID  int64 // the account that last sent it; 0 for none
	// WAMIDFailed: a failed status is kept for the status's wamid. A
	// message that failed never becomes sent again, whatever comes later.
	WAMIDFailed bool
}

// StatusMove names what a status does to its row; each is one of the
// store's named moves, a no-op when the row is no longer in its source
// states.
type StatusMove int

const (
	StatusKeep       StatusMove = iota // kept among the statuses; the row does not move
	StatusWait                         // the row is in flight: settled once its send is recorded
	StatusAdvance                      // delivery up the ladder (sent rows carrying the wamid)
	StatusFail                         // sent → failed (MoveFailAfterSend)
	StatusReschedule                   // sent → pending not before RetryAt (MoveRescheduleUndelivered)
)

// StatusAction is what one status means for its row, decided from the
// row's facts (StatusRow) by internal/webhook and carried out by the store
// in the status's own savepoint.
type StatusAction struct {
	// Adopt: the status proves the send of a row whose answer never came
	// (unknown, or requeued and never answered): the row takes the wamid
	// (MoveAdoptSend) first. When it no longer can, nothing else applies.
	Adopt bool
	Move  StatusMove
	// NotResent: a failure that would have sent the row again does not
	// (the person has it, or its campaign was cancelled).
	NotResent bool
	Error     string    // stored by StatusFail and StatusReschedule, and on the account it stops
	RetryAt   time.Time // StatusReschedule's not-before

	// What a failure means beyond its row, carried out when its move
	// applied (StatusFail, StatusReschedule) or with StatusKeep.
	Suppress      string    // the row's phone goes on the suppression list with this reason
	Pause         string    // the row's campaign reopens and pauses with this reason
	RestrictUntil time.Time // the row's account stops until then; zero: it does not
	DropAccount   bool      // the row's account stops for the row's campaign
}
