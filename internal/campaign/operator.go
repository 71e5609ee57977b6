package campaign

import (
	"errors"
	"fmt"
)

// The operator's moves on a campaign (campaign pause, cancel), as rules on
// the state it is in; the store makes the move these allow.

// ErrFinal is returned for a move on a campaign that has ended: a finished
// one can't be paused or cancelled, a cancelled one can't be anything.
var ErrFinal = errors.New("it has ended")

// PausedByOperator is the pause reason `wasend campaign pause` leaves.
const PausedByOperator = "paused by the operator (`wasend campaign pause`)"

// OperatorPause says what pausing campaign id in state was does: nothing
// (noop) when it is paused already, ErrFinal once it has ended.
func OperatorPause(id int64, was CampaignState) (noop bool, err error) {
	switch was {
	case CampaignPaused:
		return true, nil
	case CampaignFinished, CampaignCancelled:
		return false, fmt.Errorf("campaign %d can't be paused: %w (%s)", id, ErrFinal, was)
	}
	return false, nil
}

// OperatorCancel says what cancelling campaign id in state was does:
// nothing (noop) when it is cancelled already, ErrFinal once it finished.
func OperatorCancel(id int64, was CampaignState) (noop bool, err error) {
	switch was {
	case CampaignCancelled:
		return true, nil
	case CampaignFinished:
		return false, fmt.Errorf("campaign %d can't be cancelled: %w (finished)", id, ErrFinal)
	}
	return false, nil
}

// Stopped is the error a claim or a heartbeat gets from a campaign in state
// st: ErrPaused or ErrCancelled, nil while it may be sent.
func (st CampaignState) Stopped() error {
	switch st {
	case CampaignCancelled:
		return ErrCancelled
	case CampaignPaused:
		return ErrPaused
	}
	return nil
}
