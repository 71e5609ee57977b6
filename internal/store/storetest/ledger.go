package storetest

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// Ledger is the claim on top of a driver, as the engine uses it: the suite
// holds a driver's claim operations (driver.ClaimTx) to the claim's
// behaviour through it. It is internal/claim's Ledger, which the harness
// gives (storetest, a part of the store, may not import the claim above
// it).
type Ledger interface {
	ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error)
	RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max, start int) (cs []campaign.Claim, claimErr error, err error)
}

// claims is the harness's Ledger, set by Run for the suite's tests.
var claims func(driver.Driver) Ledger

func ledger(d driver.Driver) Ledger { return claims(d) }
