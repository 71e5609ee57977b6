package store

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The claim lives in internal/claim, which imports this package: this
// package's own tests cannot import it. claimhook_ext_test.go (package
// store_test, compiled into the same test binary) hands it over before any
// test runs, and these methods claim through it, as the engine does.

// TestLedger is the claim on top of a store.
type TestLedger interface {
	ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error)
	RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max, start int) ([]campaign.Claim, error, error)
}

var testLedger func(*Store) TestLedger

// SetTestLedger sets how this package's tests reach the claim.
func SetTestLedger(f func(*Store) TestLedger) { testLedger = f }

func (s *Store) ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error) {
	return testLedger(s).ClaimN(ctx, campaignID, runner, now, max)
}

func (s *Store) RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max, start int) ([]campaign.Claim, error, error) {
	return testLedger(s).RecordAndClaimN(ctx, runner, rs, campaignID, now, max, start)
}
