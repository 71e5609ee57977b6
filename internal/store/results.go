package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// RequeueFailed moves failed rows back to pending with a fresh retry
// budget: those with one of codes, or all when codes is empty. It reopens
// the campaign and returns how many rows moved.
func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if n, err = requeueFailed(ctx, tx, id, codes, s.now()); err != nil {
			return err
		}
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}

func reopen(ctx context.Context, tx *Tx, id, moved int64) error {
	if err := refuseCancelled(ctx, tx, id); err != nil {
		return err
	}
	if moved == 0 {
		return nil
	}
	return reopenCampaign(ctx, tx, id)
}

// ResumeCampaign unpauses a campaign and gives the accounts dropped from it
// another chance: the operator has fixed what stopped them. It returns the
// reason the campaign was paused, "" if it was not.
func (s *Store) ResumeCampaign(ctx context.Context, id int64) (string, error) {
	var reason string
	err := s.write(ctx, func(tx *Tx) error {
		var state campaign.CampaignState
		err := tx.QueryRowContext(ctx, `SELECT state, pause_reason FROM campaigns WHERE id = ?`, id).Scan(&state, &reason)
		if err == sql.ErrNoRows {
			return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read campaign %d: %w", id, err)
		}
		if err := refuseCancelled(ctx, tx, id); err != nil {
			return err
		}
		if state != campaign.CampaignPaused {
			reason = ""
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM campaign_accounts WHERE campaign_id = ?`, id); err != nil {
			return fmt.Errorf("restore accounts of campaign %d: %w", id, err)
		}
		return resumeCampaign(ctx, tx, id)
	})
	return reason, err
}
