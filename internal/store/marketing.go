package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// RecordMarketingStatus keeps a WABA's marketing_messages_onboarding_status
// as template sync just read it.
func (s *Store) RecordMarketingStatus(ctx context.Context, waba, status string, at time.Time) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO waba_marketing (waba_id, status, synced_at) VALUES (?, ?, ?)
			ON CONFLICT (waba_id) DO UPDATE SET status = excluded.status, synced_at = excluded.synced_at`,
			waba, status, at.UnixNano()); err != nil {
			return fmt.Errorf("record the Marketing Messages API status of WABA %s: %w", waba, err)
		}
		return nil
	})
}

// RaiseThroughput applies a THROUGHPUT_UPGRADE: the accounts of the number
// send at the higher throughput from the next claim on, running engines
// included (they read the account's limit each claim).
func (tx inboxTx) RaiseThroughput(ctx context.Context, ev campaign.AccountEvent, now time.Time) (int, error) {
	pnid, err := tx.NumberOf(ctx, ev)
	if err != nil || pnid == "" {
		return 0, err // "": a number no status webhook named yet
	}
	accts, err := loadAccounts(ctx, tx, `WHERE a.phone_number_id = ?`, pnid)
	if err != nil {
		return 0, err
	}
	for _, a := range accts {
		tier, err := tierLimits(ctx, tx.Tx, a.Tier)
		if err != nil {
			return 0, err
		}
		if err := relimit(ctx, tx.Tx, a, a.SendLimits(tier, driver.UpgradedThroughput), now); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET throughput_read = ? WHERE id = ?`, driver.UpgradedThroughput, a.ID); err != nil {
			return 0, fmt.Errorf("raise the throughput of account %s: %w", a.Name, err)
		}
	}
	return len(accts), nil
}
