package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The progress line of a wait for the shared limits names the portfolio
// and its command when the claim said which, with the run's own flags in
// place of the note's --limits placeholder, and never a claim id.
func TestDescribeSharedLimitsWait(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		wait *campaign.WaitError
		want []string
	}{
		{&campaign.WaitError{Reason: campaign.WaitLimitsLost, Detail: "portfolio p1: Redis holds no state for it; its accounts wait until `wasend quota reset --force --account a --limits URL` starts a quota day",
			Debug: "admit 1f2e:4:1: lost"}, []string{"portfolio p1", "`wasend quota reset --force --account a --db w.db --limits redis://r:6379/0`"}},
		{&campaign.WaitError{Reason: campaign.WaitLimits, Detail: "portfolio p2: shared limits (Redis) unavailable: i/o timeout"},
			[]string{"Redis does not answer (portfolio p2: ", "resumes by itself"}},
		{&campaign.WaitError{Reason: campaign.WaitLimitsLost}, []string{"`wasend quota reset --force --db w.db --limits redis://r:6379/0`", "`wasend limits status --db w.db --limits redis://r:6379/0`"}},
	}
	for _, tt := range tests {
		got := describeWait(tt.wait, now, time.UTC, " --db w.db --limits redis://r:6379/0")
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("describeWait(%+v) = %q, want it to say %q", tt.wait, got, w)
			}
		}
		if strings.Contains(got, "1f2e") {
			t.Errorf("describeWait(%+v) = %q carries a claim id", tt.wait, got)
		}
	}
}
