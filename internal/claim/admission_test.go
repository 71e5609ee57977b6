package claim

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// TestClaimReachBeforeTokens holds the local claim to limits.Decide's one
// order: a recipient new to a full window is held for the reach even while
// the number also waits for a token, as the shared gates answer, when the
// window makes room after the token comes.
func TestClaimReachBeforeTokens(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 1, 0)
	mustAccount(t, st, "a", campaign.TierNew, limited(1.0/60, 1, 100))
	joinPortfolio(t, st, "a", "acme")
	c := mustCampaign(t, st, "first", 2)
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantAccount: "a"},
		// No token before +60s, and the window of one is full until +24h.
		{At: time.Second, WantWait: campaign.WaitReach, WantUntil: 24 * time.Hour},
		{At: time.Minute, WantWait: campaign.WaitReach, WantUntil: 24 * time.Hour},
		{At: 24 * time.Hour, WantAccount: "a"},
	})
}

// TestClaimNoTokenWindowFreesFirst: rows refused for the reach while no
// number has a token are not held when the window makes room before the
// token: nothing goes before the token, and a hold would be undone before
// it helped. The batch ends at the wait; every row stays due.
func TestClaimNoTokenWindowFreesFirst(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 1, 0)
	mustAccount(t, st, "a", campaign.TierNew, limited(1.0/(48*3600), 1, 100))
	joinPortfolio(t, st, "a", "acme")
	c := mustCampaign(t, st, "first", 3)
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantAccount: "a"},
		// The window of one is full until +24h, the next token is at +48h.
		{At: time.Second, WantWait: campaign.WaitTokens, WantUntil: 24 * time.Hour},
	})
	var held int
	if err := st.Reader().QueryRowContext(t.Context(), `SELECT count(*) FROM messages WHERE campaign_id = ? AND state = 'pending'
		AND (window_wait <> 0 OR next_attempt_at > ?)`, c.ID, at(time.Second).UnixNano()).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d rows held or put off, want every row due", held)
	}
}
