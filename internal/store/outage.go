package store

import (
	"context"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/managesql"
)

// SetOutage records or clears the outage a running campaign is waiting
// out, pausing it with pause (managesql.SetOutage).
func (s *Store) SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.SetOutage(ctx, manageTx{tx}, sqlite, campaignID, o, pause) })
}
