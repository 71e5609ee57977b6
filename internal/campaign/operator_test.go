package campaign

import (
	"errors"
	"testing"
)

// TestOperatorMoves: pausing a paused campaign or cancelling a cancelled
// one changes nothing; an ended campaign refuses both with ErrFinal.
func TestOperatorMoves(t *testing.T) {
	tests := []struct {
		was                     CampaignState
		pauseNoop, pauseFinal   bool
		cancelNoop, cancelFinal bool
		stopped                 error
	}{
		{CampaignRunning, false, false, false, false, nil},
		{CampaignPaused, true, false, false, false, ErrPaused},
		{CampaignFinished, false, true, false, true, nil},
		{CampaignCancelled, false, true, true, false, ErrCancelled},
	}
	for _, tt := range tests {
		noop, err := OperatorPause(1, tt.was)
		if noop != tt.pauseNoop || errors.Is(err, ErrFinal) != tt.pauseFinal {
			t.Errorf("pause from %s = %v, %v", tt.was, noop, err)
		}
		noop, err = OperatorCancel(1, tt.was)
		if noop != tt.cancelNoop || errors.Is(err, ErrFinal) != tt.cancelFinal {
			t.Errorf("cancel from %s = %v, %v", tt.was, noop, err)
		}
		if err := tt.was.Stopped(); err != tt.stopped {
			t.Errorf("%s.Stopped() = %v, want %v", tt.was, err, tt.stopped)
		}
	}
}
