package store

import (
	"context"
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
// with a reason starting with prefix (managesql.ReadmitAccount).
func (s *Store) ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (ok bool, err error) {
	err = s.write(ctx, func(tx *Tx) (err error) {
		ok, err = managesql.ReadmitAccount(ctx, manageTx{tx}, sqlite, campaignID, accountID, prefix)
		return err
	})
	return ok, err
}
