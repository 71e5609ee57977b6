package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// Reads only the store's tests make.

// CampaignByFingerprint finds the campaign made from the same file and spec.
func (s *Store) CampaignByFingerprint(ctx context.Context, fp string) (campaign.Campaign, error) {
	c, err := scanCampaign(s.db.QueryRowContext(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE fingerprint = ?`, fp))
	if errors.Is(err, sql.ErrNoRows) {
		return c, campaign.ErrNotFound
	}
	return c, err
}

// PendingRefunds counts the refunds not yet given back to the shared
// limits.
func (s *Store) PendingRefunds(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM gate_refunds`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued refunds: %w", err)
	}
	return n, nil
}

// IsSuppressed reports whether phone (E.164) is listed, and why.
func (s *Store) IsSuppressed(ctx context.Context, phone string) (reason string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT reason FROM suppressions WHERE phone = ?`, phone).Scan(&reason)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("check suppression of %s: %w", phone, err)
	}
	return reason, true, nil
}

// SetCampaignState sets a campaign's state outside the state machine, as
// storetest.SetCampaignState does (which this package's own tests cannot
// import: storetest imports the store for its conformance suite).
func (s *Store) SetCampaignState(ctx context.Context, id int64, st campaign.CampaignState, reason string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE campaigns SET state = ?, pause_reason = ? WHERE id = ?`, string(st), reason, id)
	if err != nil {
		return fmt.Errorf("set campaign %d %s: %w", id, st, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	return nil
}

func testCampaign(fp string) campaign.Campaign {
	return campaign.Campaign{
		Name: "spring", Fingerprint: fp, Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "Hi {{name}}"},
	}
}
