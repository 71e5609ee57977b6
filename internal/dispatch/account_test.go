package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestUnknownPhoneNumberIDDropsAccount: an account whose phone number id
// Meta does not know (HTTP 400, code 100, error_subcode 33) is dropped for
// the campaign after its first answer, and its rows go to the other account
// — not failed one by one as permanent errors.
func TestUnknownPhoneNumberIDDropsAccount(t *testing.T) {
	e := newEnvBox(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Options{Faults: sandbox.Faults{UnknownNumbers: []string{"1009"}}})
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1, Burst: 5, DailyCap: 10000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1009", campaign.TierActive) // mistyped
	e.addAccount("b", "1002", campaign.TierActive)
	c := e.importN(10)
	if err := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 1, ErrorPauseRatio: 0.2}}).Run(e.ctx); err != nil {
		t.Fatalf("Run: %v, want the campaign finished on account b", err)
	}
	expectAll(t, e, campaign.Sent)
	if got := len(e.tries()["a"]); got != 1 {
		t.Errorf("account a tried %d times, want 1: nothing after Meta said its id does not exist", got)
	}
	dropped, err := readmodel.New(e.st).DroppedAccounts(e.ctx, c.ID)
	if err != nil || len(dropped) != 1 || dropped[0].Account != "a" || dropped[0].ErrorCode != 100 {
		t.Errorf("dropped accounts %+v (%v), want a with 100", dropped, err)
	}
}

// TestErrorRatioSmallCampaigns: the error-ratio pause needs a sample of
// min(20, the campaign's rows) attempts, at least 5, so a campaign smaller
// than the window pauses too when its attempts fail.
func TestErrorRatioSmallCampaigns(t *testing.T) {
	for _, tc := range []struct {
		rows, failing int
		wantPause     bool
	}{
		{rows: 10, failing: 10, wantPause: true},
		{rows: 10, failing: 3, wantPause: true},  // 30 % of 10
		{rows: 10, failing: 2, wantPause: false}, // 20 %: not over
		{rows: 5, failing: 5, wantPause: true},
		{rows: 4, failing: 4, wantPause: false}, // below the minimum sample
		{rows: 30, failing: 5, wantPause: false},
	} {
		t.Run(fmt.Sprintf("%d of %d", tc.failing, tc.rows), func(t *testing.T) {
			fail := map[string]int{}
			for i := range tc.failing {
				fail[fmtPhone(tc.rows-1-i)] = 131026 // the last rows: the sample must be whole
			}
			e, c := twoAccounts(t, sandbox.Faults{FailNumbers: fail}, tc.rows)
			ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
			defer cancel()
			err := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2, ErrorPauseRatio: 0.2}}).Run(ctx)
			if tc.wantPause {
				if !errors.Is(err, campaign.ErrPaused) {
					t.Fatalf("Run: %v, want ErrPaused", err)
				}
				expectPaused(t, e, c, "failed permanently")
				return
			}
			if err != nil {
				t.Fatalf("Run: %v, want the campaign finished", err)
			}
		})
	}
}
