package store

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestClaimReachBeforeTokens holds the local claim to limits.Decide's one
// order: a recipient new to a full window is held for the reach even while
// the number also waits for a token, as the shared gates answer.
func TestClaimReachBeforeTokens(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 1, 0)
	mustAccount(t, st, "a", campaign.TierNew, limited(1.0/60, 1, 100))
	joinPortfolio(t, st, "a", "acme")
	c := mustCampaign(t, st, "first", 2)
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 0, wantAccount: "a"},
		// No token before +60s, and the window of one is full until +24h.
		{at: time.Second, wantWait: campaign.WaitReach, wantUntil: 24 * time.Hour},
		{at: time.Minute, wantWait: campaign.WaitReach, wantUntil: 24 * time.Hour},
		{at: 24 * time.Hour, wantAccount: "a"},
	})
}
