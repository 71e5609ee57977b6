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

func (s *Store) SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) (err error) {
	err = s.unsupported("SetSchedule")
	return
}

func (s *Store) SetServiceWindow(ctx context.Context, id int64, on bool) (err error) {
	err = s.unsupported("SetServiceWindow")
	return
}

func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) (err error) {
	err = s.unsupported("SetShare")
	return
}

func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) (err error) {
	err = s.unsupported("SetPairGap")
	return
}

func (s *Store) WithClaim(ctx context.Context, fn func(store.ClaimTx) error) (err error) {
	err = s.unsupported("WithClaim")
	return
}

func (s *Store) RecordAll(ctx context.Context, runner string, rs []campaign.Result) (err error) {
	err = s.unsupported("RecordAll")
	return
}

func (s *Store) RecordWithClaim(ctx context.Context, runner string, rs []campaign.Result, fn func(store.ClaimTx) error) (_ error, err error) {
	err = s.unsupported("RecordWithClaim")
	return
}

func (s *Store) SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) (err error) {
	err = s.unsupported("SetOutage")
	return
}

func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (_ map[int64]int, err error) {
	err = s.unsupported("RecoverOrphans")
	return
}

func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (_ int, err error) {
	err = s.unsupported("Rescue")
	return
}

func (s *Store) PauseCampaign(ctx context.Context, id int64, reason string) (_ campaign.CampaignState, err error) {
	err = s.unsupported("PauseCampaign")
	return
}

func (s *Store) ResumeCampaign(ctx context.Context, id int64) (_ string, err error) {
	err = s.unsupported("ResumeCampaign")
	return
}

func (s *Store) CancelCampaign(ctx context.Context, id int64) (_ campaign.CampaignState, err error) {
	err = s.unsupported("CancelCampaign")
	return
}

func (s *Store) DeleteCampaign(ctx context.Context, id int64) (err error) {
	err = s.unsupported("DeleteCampaign")
	return
}

func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (_ int, err error) {
	err = s.unsupported("RequeueFailed")
	return
}

func (s *Store) RequeueUnknown(ctx context.Context, id int64) (_ int, err error) {
	err = s.unsupported("RequeueUnknown")
	return
}

func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (_ int, err error) {
	err = s.unsupported("RequeueUndelivered")
	return
}

func (s *Store) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) (err error) {
	err = s.unsupported("DropAccount")
	return
}

func (s *Store) ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (_ bool, err error) {
	err = s.unsupported("ReadmitAccount")
	return
}

func (s *Store) RemoveAccount(ctx context.Context, name string) (err error) {
	err = s.unsupported("RemoveAccount")
	return
}

func (s *Store) RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (_ campaign.AccountStatus, err error) {
	err = s.unsupported("RecordSync")
	return
}

func (s *Store) SetAutoTier(ctx context.Context, name string, on *bool, promoteAfter *time.Duration) (err error) {
	err = s.unsupported("SetAutoTier")
	return
}

func (s *Store) TierProgress(ctx context.Context) (_ map[string]campaign.TierProgress, err error) {
	err = s.unsupported("TierProgress")
	return
}

func (s *Store) ResetQuota(ctx context.Context, names []string, force bool) (_ []store.QuotaReset, err error) {
	err = s.unsupported("ResetQuota")
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
