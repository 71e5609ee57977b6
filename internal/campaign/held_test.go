package campaign

import (
	"strings"
	"testing"
	"time"
)

// TestHeldStop: a campaign stops adding sends once --max-held of them are
// held, looks again HeldLookAgain later, and never stops with 0.
func TestHeldStop(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		held, max int
		stop      bool
	}{
		{0, DefaultMaxHeld, false},
		{DefaultMaxHeld - 1, DefaultMaxHeld, false},
		{DefaultMaxHeld, DefaultMaxHeld, true},
		{500, 4, true},
		{500, 0, false},
	}
	for _, tt := range tests {
		we := HeldStop(tt.held, tt.max, now)
		if (we != nil) != tt.stop {
			t.Errorf("HeldStop(%d, %d) = %v; want stop %v", tt.held, tt.max, we, tt.stop)
			continue
		}
		if we != nil && (we.Reason != WaitHeld || !we.Until.Equal(now.Add(HeldLookAgain)) ||
			!strings.Contains(we.Detail, "held for quality assessment")) {
			t.Errorf("HeldStop(%d, %d) = %+v", tt.held, tt.max, we)
		}
	}
}
