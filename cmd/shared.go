package cmd

import (
	"context"

	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/store/driver"
)

// openShared connects to the suppression list and settings every host
// shares when --limits (or $WASEND_LIMITS) names a Redis; nil without.
// The caller closes it.
func (f *Factory) openShared(ctx context.Context) (*hostshare.Shared, error) {
	u := f.LimitsURL()
	if u == "" {
		return nil, nil
	}
	if err := hostshare.CheckURL(u); err != nil {
		return nil, usageError{err} // exit 2, as every other command says it
	}
	return hostshare.OpenShared(ctx, u)
}

// withRecord runs fn with the record of the suppression list and
// settings: under --limits the shared one (this database following it),
// else this database.
func (f *Factory) withRecord(ctx context.Context, fn func(*hostshare.Record) error) error {
	sh, err := f.openShared(ctx)
	if err != nil {
		return err
	}
	if sh != nil {
		defer sh.Close()
	}
	return f.withStore(ctx, func(st driver.Driver) error { return fn(hostshare.NewRecord(st, sh)) })
}

// sharedNote is said after a change written to the shared state and this
// host's database.
const sharedNote = "changed on the shared list (--limits) and in this database; senders on other hosts copy it within seconds"

// hostSync is the loop that copies the shared state into st while a
// campaign sends under --limits; nil without --limits.
func (f *Factory) hostSync(ctx context.Context, st driver.Driver) (*hostshare.Sync, func(), error) {
	sh, err := f.openShared(ctx)
	if err != nil || sh == nil {
		return nil, func() {}, err
	}
	logger, err := f.Logger()
	if err != nil {
		sh.Close()
		return nil, func() {}, err
	}
	return hostshare.NewSync(sh, st, hostshare.SyncOptions{Log: logger}), func() { sh.Close() }, nil
}

// pullShared copies the shared suppression list and settings into st once,
// under --limits, so an import screens the file against them. Redis
// unreachable after connecting is a warning: the import goes on with this
// database's copy, and the claims check the list again before each send.
func (f *Factory) pullShared(ctx context.Context, st driver.Driver) error {
	hs, closeSync, err := f.hostSync(ctx, st)
	if err != nil || hs == nil {
		return err
	}
	defer closeSync()
	if err := hs.Pull(ctx); err != nil {
		f.IO.Warnf("shared suppression list and settings: %v; going on with this database's copy", err)
	}
	return nil
}
