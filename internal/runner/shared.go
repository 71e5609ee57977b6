package runner

import (
	"context"
	"sync"
)

// SharedSync keeps this host's database in step with what several hosts
// share through Redis (hostsync.Sync): the suppression list and the tier
// and global settings that every claim reads.
type SharedSync interface {
	// Pull applies the changes made since the last pull.
	Pull(ctx context.Context) error
	// Run pulls every poll until ctx ends, logging failures.
	Run(ctx context.Context)
}

// startShared pulls once, so the first claim already sees the shared list,
// then keeps pulling next to the engine until stop is called. A failed
// first pull is a warning: the host sends with the copy it has (whether it
// may send at all without Redis is the limits gate's call).
func startShared(ctx context.Context, o Options) (stop func()) {
	if o.Shared == nil {
		return func() {}
	}
	if err := o.Shared.Pull(ctx); err != nil {
		o.IO.Warnf("shared suppression list and settings: %v; sending with this host's copy, trying again every poll", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { o.Shared.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}
