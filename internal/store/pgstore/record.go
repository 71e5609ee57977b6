package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/recordsql"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/tierrecord"
)

// RecordAll stores outcomes (sent, retry, failed, unknown) in one sending
// transaction; those refused by their fence change nothing and make the
// error a *campaign.FenceError.
func (s *Store) RecordAll(ctx context.Context, runner string, rs []campaign.Result) error {
	var refused []int64
	err := s.sendTx(ctx, func(tx pgx.Tx, lead *pgx.Batch) error {
		refused = nil // a retried transaction starts over
		if err := recordAll(ctx, tx, lead, runner, rs, &refused); err != nil {
			return err
		}
		if err := send(ctx, tx, lead); err != nil {
			return fmt.Errorf("record %d outcomes: %w", len(rs), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fenced(refused)
}

// fenced is a FenceError naming refused rows, nil for none.
func fenced(refused []int64) error {
	if len(refused) == 0 {
		return nil
	}
	return &campaign.FenceError{Rows: refused}
}

// recordAll stores outcomes: the plain sent ones are queued on b, which
// the caller sends; the others, rare, go one by one after what b holds.
// The rows their fence refuses are added to refused (the plain sent ones
// when b is sent).
func recordAll(ctx context.Context, tx pgx.Tx, b *pgx.Batch, runner string, rs []campaign.Result, refused *[]int64) error {
	var (
		plain  []campaign.Result
		wamids []string
	)
	for _, r := range rs {
		if r.Outcome.Kind == campaign.OutcomeSent && r.Outcome.WAMID != "" {
			wamids = append(wamids, r.Outcome.WAMID)
		}
		if plainSent(r) {
			plain = append(plain, r)
			continue
		}
		if err := send(ctx, tx, b); err != nil {
			return fmt.Errorf("record outcomes: %w", err)
		}
		moved, err := record(ctx, tx, r.Claim, r.Outcome, r.At)
		if err != nil {
			return err
		}
		if !moved {
			*refused = append(*refused, r.Claim.Message.ID)
		}
	}
	recordSent(b, plain, refused)
	linkWaitingStatuses(b, wamids)
	return nil
}

// plainSent reports whether r is a message accepted with nothing more to
// it: what most outcomes are, and what recordSent stores in bulk.
func plainSent(r campaign.Result) bool {
	o := r.Outcome
	return o.Kind == campaign.OutcomeSent && r.Claim.AttemptID != 0 && o.ErrorCode == 0 && !o.Refund &&
		o.Throttle == nil && o.RateFactor == 0 && o.Restrict == 0 && !o.DropAccount && o.Pause == "" && !o.Suppress && !o.Held
}

// recordSent queues on b what stores plain sent outcomes, two statements:
// the rows and their attempts (the send log reads those: claimsql.LogClaims).
// The rows their fence refuses
// are added to refused when b is sent.
func recordSent(b *pgx.Batch, rs []campaign.Result, refused *[]int64) {
	if len(rs) == 0 {
		return
	}
	n := len(rs)
	var (
		ids, ats, attempts, fences = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		wamids, classes            = make([]string, n), make([]string, n)
	)
	for i, r := range rs {
		ids[i], ats[i], attempts[i], fences[i] = r.Claim.Message.ID, r.At.UnixNano(), r.Claim.AttemptID, r.Claim.Fence
		wamids[i], classes[i] = r.Outcome.WAMID, r.Outcome.Class
	}
	b.Queue(recordSentBulkSQL, ids, wamids, ats, fences).Query(func(rows pgx.Rows) error {
		moved := make(map[int64]bool, n)
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			moved[id] = true
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if !moved[id] {
				*refused = append(*refused, id)
			}
		}
		return nil
	})
	b.Queue(`UPDATE attempts SET done_at = greatest(coalesce(attempts.done_at, v.at), v.at), outcome = 'sent', error_code = NULL, class = v.class
		FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS v(id, at, class) WHERE attempts.id = v.id`,
		attempts, ats, classes)
}

// record stores one outcome as both drivers do (recordsql.Record); moved
// is false when the row's fence refused it.
func record(ctx context.Context, tx pgx.Tx, c campaign.Claim, o campaign.Outcome, now time.Time) (moved bool, err error) {
	return recordsql.Record(ctx, recordTx{tx}, postgres, c, o, now)
}

// recordTx is a transaction as recordsql writes through it.
type recordTx struct{ tx pgx.Tx }

func (r recordTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := r.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (r recordTx) Accounts(ctx context.Context, where string, args ...any) ([]rowscan.Account, error) {
	return loadAccounts(ctx, r.tx, where, args...)
}

func (r recordTx) PauseCampaign(ctx context.Context, id int64, reason string) error {
	return managesql.PauseCampaign(ctx, manageTx{r.tx}, postgres, id, reason)
}

func (r recordTx) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return dropAccount(ctx, r.tx, campaignID, accountID, reason, code, now)
}

func (r recordTx) Demote(ctx context.Context, accountID int64, o campaign.Outcome, now time.Time) error {
	return tierrecord.Demote(ctx, warmupTx{r.tx}, accountID, o, now)
}

// linkWaitingStatuses matches the statuses kept unmatched for the given
// wamids (their webhook came before the send's answer was recorded) to the
// rows that carry them now, and marks them waiting: the applier's next
// pass settles them. A status matched once is never linked again. Queued
// on b, after the rows it links to.
func linkWaitingStatuses(b *pgx.Batch, wamids []string) {
	if len(wamids) == 0 {
		return
	}
	b.Queue(`UPDATE message_statuses SET message_id = m.id, applied = 0
		FROM messages m WHERE message_statuses.message_id IS NULL AND message_statuses.wamid = ANY($1)
		AND m.wamid = message_statuses.wamid`, wamids)
}
