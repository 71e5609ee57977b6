package dispatch_test

import (
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/sandbox"
)

// TestSharedReactionFollowed: another host sending from number 1001 had
// its share of throttles rise, and the reaction the hosts share in Redis
// probes a lower rate. This host, which saw no throttle, follows it at its
// first answer: the account's rate factor in its database is the probe's,
// so its claims offer the shared bucket the number's lower rate too.
func TestSharedReactionFollowed(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1, Burst: 5, DailyCap: 10000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(5)
	srv := redistest.Start(t)
	open := func() *hostshare.Shared {
		sh, err := hostshare.OpenShared(e.ctx, srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sh.Close() })
		return sh
	}
	// Its first throttle starts the windows, then FastAnswers answers.
	other := make([]ratelimit.Answered, 1+ratelimit.FastAnswers)
	for i := range other {
		other[i] = ratelimit.Answered{At: e.clock.Now(), Throttled: i%3 == 0}
	}
	f, since, err := open().FeedReaction(e.ctx, "1001", other)
	if err != nil {
		t.Fatal(err)
	}
	if f != ratelimit.ProbeDrop || !since.Equal(e.clock.Now()) {
		t.Fatalf("the other host's feed decided %v at %v; want the probe's %v now", f, since, ratelimit.ProbeDrop)
	}

	if err := e.engine(c, dispatch.Options{Reactions: open()}).Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	a, err := e.st.Account(e.ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.RateFactor-ratelimit.ProbeDrop) > 1e-9 {
		t.Errorf("account a's rate factor %v; want the shared reaction's %v", a.RateFactor, ratelimit.ProbeDrop)
	}
}
