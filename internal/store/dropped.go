package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/store/managesql"
)

// DropAccount stops an account for one campaign, as an account-fatal answer
// during a run does: its rows go to the other accounts, `status` shows why,
// and `campaign resume` gives it another chance. An account already dropped
// keeps its first reason.
func (s *Store) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return s.write(ctx, func(tx *Tx) error { return dropAccount(ctx, tx, campaignID, accountID, reason, code, now) })
}

func dropAccount(ctx context.Context, tx *Tx, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return managesql.DropAccount(ctx, manageTx{tx}, sqlite, campaignID, accountID, reason, code, now)
}

// ReadmitAccount takes an account back into a campaign if it was dropped
// with a reason starting with prefix; other drops stay until `campaign
// resume`. It reports whether the account was taken back.
func (s *Store) ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM campaign_accounts WHERE campaign_id = ? AND account_id = ?
			AND substr(reason, 1, ?) = ?`, campaignID, accountID, len(prefix), prefix)
		if err != nil {
			return fmt.Errorf("readmit account %d to campaign %d: %w", accountID, campaignID, err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n > 0, err
}
