package hostshare

import (
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/ratelimit"
)

// TestFeedReactionConcurrent: ten hosts feed the number's shared reaction
// at once, after its first throttle, FastAnswers answers in all,
// FastThrottles of them throttled. No feed is lost to another written at
// the same instant (each retries from what the other wrote): together they
// are the answers and throttles that judge a window early, so the reaction
// probes — which every host reads, and which no host's answer alone could
// have decided.
func TestFeedReactionConcurrent(t *testing.T) {
	srv := redistest.Start(t)
	ctx := t.Context()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const hosts = 10
	per := ratelimit.FastAnswers / hosts
	// The number's first throttle: windows count from it (the server's
	// burst before it tells nothing of a ceiling).
	if _, _, err := openShared(t, srv).FeedReaction(ctx, "1001", []ratelimit.Answered{{At: t0, Throttled: true}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, hosts)
	start := make(chan struct{})
	for h := range hosts {
		sh := openShared(t, srv)
		if err := sh.rdb.Ping(ctx).Err(); err != nil { // connected before the start
			t.Fatal(err)
		}
		wg.Go(func() {
			<-start
			as := make([]ratelimit.Answered, per)
			for i := range as {
				as[i] = ratelimit.Answered{At: t0, Throttled: i == 0 && h < ratelimit.FastThrottles}
			}
			_, _, errs[h] = sh.FeedReaction(ctx, "1001", as)
		})
	}
	close(start)
	wg.Wait()
	for h, err := range errs {
		if err != nil {
			t.Fatalf("host %d: %v", h, err)
		}
	}
	f, since, err := openShared(t, srv).FeedReaction(ctx, "1001", []ratelimit.Answered{{At: t0.Add(time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	if f != ratelimit.ProbeDrop || !since.Equal(t0) {
		t.Errorf("the shared reaction decided %v at %v; want the probe's %v at %v", f, since, ratelimit.ProbeDrop, t0)
	}
	// Another number's is its own.
	if f, since, err := openShared(t, srv).FeedReaction(ctx, "1002", []ratelimit.Answered{{At: t0}}); err != nil || f != 1 || !since.IsZero() {
		t.Errorf("number 1002: %v at %v (%v); want the full rate, never decided", f, since, err)
	}
	if ttl := srv.Client(t).TTL(ctx, reactionKey("1001")).Val(); ttl <= 0 || ttl > reactionTTL {
		t.Errorf("the reaction's key expires in %v; want within %v", ttl, reactionTTL)
	}
}
