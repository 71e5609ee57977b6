package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
)

// RecordSync keeps what the Graph API said of an account's number: its
// quality, name, throughput (which then bounds the account's rate) and its
// portfolio's messaging limit. A field not read (0) keeps the value it
// had: a limit that could not be read is not a limit of zero.
func (s *Store) RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (campaign.AccountStatus, error) {
	var out campaign.AccountStatus
	err := s.write(ctx, func(tx *Tx) error {
		accts, err := loadAccounts(ctx, tx, `WHERE a.name = ?`, name)
		if err != nil {
			return err
		}
		if len(accts) == 0 {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		a := accts[0]
		now := s.now()
		if n.At.IsZero() {
			n.At = now
		}
		tier, err := tierLimits(ctx, tx, a.Tier)
		if err != nil {
			return err
		}
		read := a.ThroughputRead
		if n.Throughput > 0 {
			read = n.Throughput
		}
		if err := relimit(ctx, tx, a, a.SendLimits(tier, read), now); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET throughput_read = ?, quality_rating = ?, verified_name = ?,
			name_status = ?, synced_at = ?, messaging_limit_read = coalesce(?, messaging_limit_read) WHERE id = ?`,
			nullThroughput(read), n.QualityRating, n.VerifiedName, n.NameStatus, n.At.UnixNano(),
			sql.NullInt64{Int64: int64(n.MessagingLimit), Valid: n.MessagingLimit != 0}, a.ID); err != nil {
			return fmt.Errorf("record the sync of %s: %w", name, err)
		}
		accts, err = loadAccounts(ctx, tx, `WHERE a.id = ?`, a.ID)
		if err != nil {
			return err
		}
		out = accts[0].status(now)
		return nil
	})
	return out, err
}
