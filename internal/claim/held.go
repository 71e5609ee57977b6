package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// heldTx is what heldStop reads in the claim's transaction: the store's
// ClaimTx implements it.
type heldTx interface {
	Held(ctx context.Context, campaignID int64) (held, max int, err error)
}

// heldStop stops a campaign's claims while too many of its sends are held
// for quality assessment (campaign.HeldStop): Meta releases or drops them
// together, and a send added meanwhile shares their fate. A store without
// the count never stops.
func heldStop(ctx context.Context, tx driver.ClaimTx, campaignID int64, now time.Time) error {
	ht, ok := tx.(heldTx)
	if !ok {
		return nil
	}
	held, max, err := ht.Held(ctx, campaignID)
	if err != nil {
		return err
	}
	if we := campaign.HeldStop(held, max, now); we != nil {
		return we
	}
	return nil
}
