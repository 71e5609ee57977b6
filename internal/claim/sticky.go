package claim

import (
	"context"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// stickyBreak says why a recipient's sticky number, which the claim did
// not offer, could not send, for the campaign's tally. Locally it is named
// by its account id; under --limits by its name in the gate (gateName),
// and one the database does not have is another host's number in the same
// portfolio.
func stickyBreak(ctx context.Context, tx driver.ClaimTx, campaignID, accountID int64, gateName string) (string, error) {
	f, err := tx.Fate(ctx, campaignID, accountID, gateName)
	switch {
	case err != nil:
		return "", err
	case !f.Found && gateName != "":
		return campaign.StickyElsewhere, nil
	case !f.Found, f.Removed:
		return campaign.StickyRemoved, nil
	case f.Disabled:
		return campaign.StickyDisabled, nil
	case f.Dropped:
		return campaign.StickyDropped, nil
	}
	return campaign.StickyDisabled, nil
}
