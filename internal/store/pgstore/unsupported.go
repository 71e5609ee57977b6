package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/store"
)

// unsupported is the error of a method not implemented on Postgres yet,
// told to Options.Unsupported first.
func (s *Store) unsupported(method string) error {
	if s.hook != nil {
		s.hook(method)
	}
	return fmt.Errorf("pgstore: %s: not implemented yet: %w", method, errors.ErrUnsupported)
}

// The methods below are the ones not yet made real (issue 30).

func (s *Store) RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (_ campaign.AccountStatus, err error) {
	err = s.unsupported("RecordSync")
	return
}

func (s *Store) SetAutoTier(ctx context.Context, name string, on *bool, promoteAfter *time.Duration) (err error) {
	err = s.unsupported("SetAutoTier")
	return
}

func (s *Store) AddPortfolio(ctx context.Context, p campaign.Portfolio) (_ campaign.Portfolio, err error) {
	err = s.unsupported("AddPortfolio")
	return
}

func (s *Store) UpdatePortfolio(ctx context.Context, name string, ch store.PortfolioChange) (_ campaign.Portfolio, err error) {
	err = s.unsupported("UpdatePortfolio")
	return
}

func (s *Store) Portfolios(ctx context.Context) (_ []campaign.PortfolioStatus, err error) {
	err = s.unsupported("Portfolios")
	return
}

func (s *Store) ShareLimits(ctx context.Context, g store.Gates, unavailable func(error) bool) (err error) {
	err = s.unsupported("ShareLimits")
	return
}

func (s *Store) HostPart(ctx context.Context, portfolio, today string) (_ limits.RebuildRequest, err error) {
	err = s.unsupported("HostPart")
	return
}

func (s *Store) CountLinks(ctx context.Context) (_ int, err error) {
	err = s.unsupported("CountLinks")
	return
}

func (s *Store) LinkedIn(ctx context.Context, ids []string) (_ map[string][]string, err error) {
	err = s.unsupported("LinkedIn")
	return
}

func (s *Store) ApplySuppressions(ctx context.Context, listed []store.Suppression, removed []string, mark store.SyncMark) (err error) {
	err = s.unsupported("ApplySuppressions")
	return
}

func (s *Store) AddToInbox(ctx context.Context, bodies [][]byte) (err error) {
	err = s.unsupported("AddToInbox")
	return
}

func (s *Store) WithInbox(ctx context.Context, fn func(tx store.InboxTx, now time.Time) error) (err error) {
	err = s.unsupported("WithInbox")
	return
}

func (s *Store) PruneInbound(ctx context.Context, before time.Time) (_ int, err error) {
	err = s.unsupported("PruneInbound")
	return
}

func (s *Store) ReplaceTemplates(ctx context.Context, waba string, ts []campaign.Template) (err error) {
	err = s.unsupported("ReplaceTemplates")
	return
}
