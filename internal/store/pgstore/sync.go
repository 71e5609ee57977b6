package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/suppresssql"
)

// What is read from the Graph API and kept (numbers, templates), and the
// operator's warm-up switch.

// RecordSync keeps a number's sync (driver.Driver): a field the Graph API
// did not give keeps its value, and the throughput read bounds the rate.
func (s *Store) RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (campaign.AccountStatus, error) {
	var out campaign.AccountStatus
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		a, err := lockAccount(ctx, tx, name)
		if err != nil {
			return err
		}
		now := s.now()
		at := n.At
		if at.IsZero() {
			at = now
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
		var throughput *float64
		if read != 0 {
			throughput = &read
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts SET throughput_read = $1, quality_rating = $2, verified_name = $3,
			name_status = $4, synced_at = $5, messaging_limit_read = coalesce($6, messaging_limit_read) WHERE id = $7`,
			throughput, n.QualityRating, n.VerifiedName, n.NameStatus, at.UnixNano(),
			nullID(int64(n.MessagingLimit)), a.ID); err != nil {
			return fmt.Errorf("record the sync of %s: %w", name, err)
		}
		accts, err := loadAccounts(ctx, tx, `WHERE a.id = $2`, a.ID)
		if err != nil {
			return err
		}
		out = accts[0].StatusAt(now)
		return nil
	})
	return out, err
}

// SetAutoTier sets the warm-up switch and the time to promotion given (nil
// leaves one as it is), logging a switch that changes.
func (s *Store) SetAutoTier(ctx context.Context, name string, on *bool, promoteAfter *time.Duration) error {
	if promoteAfter != nil {
		if err := campaign.CheckPromoteAfter(*promoteAfter); err != nil {
			return err
		}
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			id   int64
			tier string
			was  int64
		)
		err := tx.QueryRow(ctx, `SELECT id, tier, auto_tier FROM accounts WHERE name = $1 AND removed_at IS NULL FOR UPDATE`, name).
			Scan(&id, &tier, &was)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read account %s: %w", name, err)
		}
		if promoteAfter != nil {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET promote_after = $1 WHERE id = $2`, int64(*promoteAfter), id); err != nil {
				return fmt.Errorf("account %s: %w", name, err)
			}
		}
		if on == nil || *on == (was != 0) {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts SET auto_tier = $1 WHERE id = $2`, boolInt(*on), id); err != nil {
			return fmt.Errorf("account %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tier_changes (account_id, at, from_tier, to_tier, reason) VALUES ($1, $2, $3, $3, $4)`,
			id, s.now().UnixNano(), tier, campaign.AutoTierNote(*on, false)); err != nil {
			return fmt.Errorf("log tier change: %w", err)
		}
		return nil
	})
}

// ReplaceTemplates puts a WABA's templates as just read in place of those
// it had, in one round trip: one deleted at Meta goes.
func (s *Store) ReplaceTemplates(ctx context.Context, waba string, ts []campaign.Template) error {
	now := s.now()
	return s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM templates WHERE waba_id = $1`, waba)
		for _, t := range ts {
			at := t.SyncedAt
			if at.IsZero() {
				at = now
			}
			b.Queue(`INSERT INTO templates (waba_id, name, language, status, category, parameter_format, components, synced_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (waba_id, name, language) DO UPDATE SET
				status = excluded.status, category = excluded.category, parameter_format = excluded.parameter_format,
				components = excluded.components, synced_at = excluded.synced_at`,
				waba, t.Name, t.Language, t.Status, t.Category, t.ParameterFormat, t.Components, at.UnixNano())
		}
		if err := send(ctx, tx, b); err != nil {
			return fmt.Errorf("replace the templates of WABA %s: %w", waba, err)
		}
		return nil
	})
}

// ApplySuppressions makes the list agree with the list several hosts
// share, in one transaction with the mark of how far it now has: each of
// listed is on the list with exactly its reason (and needs no push), and
// each of removed is off it — unless this database listed it from an API
// answer or webhook (an opt-out) still waiting to be pushed: that is newer
// than the removal. A number listed here earlier keeps the earlier time.
func (s *Store) ApplySuppressions(ctx context.Context, listed []campaign.Suppression, removed []string, mark driver.SyncMark) error {
	if err := suppresssql.CheckListable(listed); err != nil {
		return err
	}
	now := s.now()
	return s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, sp := range listed {
			at := sp.CreatedAt
			if at.IsZero() {
				at = now
			}
			b.Queue(`INSERT INTO suppressions (phone, reason, created_at) VALUES ($1, $2, $3)
				ON CONFLICT (phone) DO UPDATE SET reason = excluded.reason, created_at = LEAST(suppressions.created_at, excluded.created_at)
				WHERE suppressions.reason IS DISTINCT FROM excluded.reason OR suppressions.created_at > excluded.created_at`,
				sp.Phone, sp.Reason, nanos(at))
			b.Queue(`DELETE FROM suppression_push WHERE phone = $1`, sp.Phone)
		}
		if len(removed) > 0 {
			b.Queue(`DELETE FROM suppressions WHERE phone = ANY($1)
				AND NOT EXISTS (SELECT 1 FROM suppression_push p WHERE p.phone = suppressions.phone AND p.if_unknown = 0)`, removed)
		}
		b.Queue(`INSERT INTO shared_sync (name, epoch, version) VALUES ('suppressions', $1, $2)
			ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, version = excluded.version`, mark.Epoch, mark.Version)
		if err := send(ctx, tx, b); err != nil {
			return fmt.Errorf("apply the shared suppression list: %w", err)
		}
		return nil
	})
}
