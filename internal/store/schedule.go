package store

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/managesql"
)

// A campaign's settings changed after its import: when it may send
// (SetSchedule), how it shares the accounts (SetShare), its pair gap.

// SetSchedule changes when a campaign may send (managesql.SetSchedule).
func (s *Store) SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.SetSchedule(ctx, manageTx{tx}, sqlite, id, sc) })
}

// SetShare changes how a campaign shares the accounts (managesql.SetShare).
func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.SetShare(ctx, manageTx{tx}, sqlite, id, ch) })
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for the claims of a campaign.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.SetPairGap(ctx, manageTx{tx}, sqlite, campaignID, gap) })
}
