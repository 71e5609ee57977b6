package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/managesql"
)

// A campaign's settings the claim reads: its schedule, its share of the
// accounts, its pair gap and its customer service window check (SQLite's
// schedule.go, priority.go, sticky.go, servicewindow.go).

// SetSchedule changes when a campaign may send (managesql.SetSchedule).
func (s *Store) SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.SetSchedule(ctx, manageTx{tx}, postgres, id, sc) })
}

// SetShare changes how a campaign shares the accounts, from its next claim.
func (s *Store) SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return managesql.SetShare(ctx, manageTx{tx}, postgres, id, ch) })
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for a campaign's claims.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	return managesql.SetPairGap(ctx, manageTx{s.pool}, postgres, campaignID, gap)
}

// SetServiceWindow says whether a campaign's rows are checked for an open
// customer service window at each claim.
func (s *Store) SetServiceWindow(ctx context.Context, id int64, on bool) error {
	return managesql.SetServiceWindow(ctx, manageTx{s.pool}, postgres, id, on)
}
