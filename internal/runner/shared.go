package runner

import (
	"context"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/dispatch"
)

// SharedSync keeps this host's database in step with what several hosts
// share through Redis (hostshare.Sync): the suppression list and the tier
// and global settings that every claim reads.
type SharedSync interface {
	// Pull pushes this host's own suppressions not shared yet, then
	// applies the changes made since the last pull.
	Pull(ctx context.Context) error
	// Push puts this host's own suppressions not shared yet on the
	// shared list.
	Push(ctx context.Context) error
	// Run pulls every poll until ctx ends, logging failures.
	Run(ctx context.Context)
}

// startShared pulls once, so the first claim already sees the shared list,
// then keeps pulling next to the engine until stop is called. A failed
// first pull is a warning: the host sends with the copy it has (whether it
// may send at all without Redis is the limits gate's call). stop pushes
// once more, so opt-outs the last answers reported reach the other hosts
// now rather than at this host's next run.
func startShared(ctx context.Context, o Options) (stop func()) {
	if o.Shared == nil {
		return func() {}
	}
	if err := o.Shared.Pull(ctx); err != nil {
		o.IO.Warnf("shared suppression list and settings: %v; sending with this host's copy, trying again every poll", err)
	}
	loop, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { o.Shared.Run(loop) })
	return func() {
		cancel()
		wg.Wait()
		// Also after Ctrl-C; bounded like a claim's call to Redis.
		pctx, done := context.WithTimeout(context.WithoutCancel(ctx), finalPush)
		defer done()
		if err := o.Shared.Push(pctx); err != nil {
			o.IO.Warnf("numbers suppressed during this run not yet on the shared list (%v); the next sender with --limits on this database puts them there", err)
		}
	}
}

// finalPush bounds the push at the end of a run.
const finalPush = 3 * time.Second

// sharedReactions is the throttle reactions the hosts share, when what
// they share holds them (hostshare.Sync does); nil without --limits.
func sharedReactions(s SharedSync) dispatch.SharedReactions {
	r, _ := s.(dispatch.SharedReactions)
	return r
}
