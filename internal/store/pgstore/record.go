package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
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
		moved, err := record(ctx, tx, r.Claim, runner, r.Outcome, r.At)
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

// recordSent queues on b what stores plain sent outcomes, three statements:
// the rows, their attempts, the send log. The rows their fence refuses
// are added to refused when b is sent.
func recordSent(b *pgx.Batch, rs []campaign.Result, refused *[]int64) {
	if len(rs) == 0 {
		return
	}
	n := len(rs)
	var (
		ids, ats, attempts, accts = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		fences                    = make([]int64, n)
		wamids, classes, phones   = make([]string, n), make([]string, n), make([]string, n)
	)
	for i, r := range rs {
		ids[i], ats[i], attempts[i], accts[i] = r.Claim.Message.ID, r.At.UnixNano(), r.Claim.AttemptID, r.Claim.Account.ID
		wamids[i], classes[i], phones[i], fences[i] = r.Outcome.WAMID, r.Outcome.Class, r.Claim.Message.Phone, r.Claim.Fence
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
	// One row of the log per (account, number): the latest send wins.
	b.Queue(`UPDATE contact_log SET sent_at = greatest(contact_log.sent_at, v.at)
		FROM (SELECT a, p, max(at) AS at FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS u(a, p, at) GROUP BY a, p) AS v
		WHERE contact_log.account_id = v.a AND contact_log.phone = v.p`, accts, phones, ats)
}

// record stores one outcome; moved is false when the row's fence refused
// it (what the answer says about the account and campaign is kept).
func record(ctx context.Context, tx pgx.Tx, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) (moved bool, err error) {
	var outcome string
	switch o.Kind {
	case campaign.OutcomeSent:
		outcome = "sent"
	case campaign.OutcomeRetry:
		outcome = "retry"
	case campaign.OutcomeFailed:
		outcome = "failed"
	case campaign.OutcomeUnknown:
		outcome = "unknown"
	default:
		return false, fmt.Errorf("record message %d: unknown outcome %d", c.Message.ID, o.Kind)
	}
	var code *int64
	if o.ErrorCode != 0 {
		v := int64(o.ErrorCode)
		code = &v
	}
	moved, err = recordOutcome(ctx, tx, c, runner, o, code, now)
	if err != nil {
		return false, fmt.Errorf("record message %d %s: %w", c.Message.ID, outcome, err)
	}
	// A row no longer ours was declared unknown by a rescue: it stays as
	// the operator sees it, but what the answer says about the account and
	// campaign is still true.
	if moved && o.Refund {
		if _, err := tx.Exec(ctx, `UPDATE accounts SET used_today = greatest(used_today - 1, 0)
			WHERE id = $1 AND quota_epoch = $2`, c.Account.ID, c.QuotaEpoch); err != nil {
			return false, fmt.Errorf("refund quota of %s: %w", c.Account.Name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE contact_log SET last_at = prev_at, prev_at = 0
			WHERE account_id = $1 AND phone = $2 AND last_at = $3`, c.Account.ID, c.Message.Phone, c.At.UnixNano()); err != nil {
			return false, fmt.Errorf("take back the send to %s: %w", c.Message.Phone, err)
		}
		if sc := c.Shared; sc != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO gate_refunds (claim, portfolio, account, day, at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT DO NOTHING`, sc.ID, sc.Portfolio, sc.Account, sc.Day, now.UnixNano()); err != nil {
				return false, fmt.Errorf("queue the refund of %s: %w", sc.ID, err)
			}
		}
	}
	if moved && o.Kind == campaign.OutcomeSent {
		if _, err := tx.Exec(ctx, `UPDATE contact_log SET sent_at = greatest(sent_at, $1) WHERE account_id = $2 AND phone = $3`,
			now.UnixNano(), c.Account.ID, c.Message.Phone); err != nil {
			return false, fmt.Errorf("log the send to %s: %w", c.Message.Phone, err)
		}
	}
	if err := applyEffects(ctx, tx, c, o, now); err != nil {
		return false, err
	}
	// A closed attempt's time never goes back (a late answer after a
	// rescue closed it): the kept counts keep the latest.
	if c.AttemptID != 0 {
		_, err = tx.Exec(ctx, `UPDATE attempts SET done_at = greatest(coalesce(done_at, $1), $1), outcome = $2, error_code = $3, class = $4
			WHERE id = $5`, now.UnixNano(), outcome, code, o.Class, c.AttemptID)
	} else {
		_, err = tx.Exec(ctx, `UPDATE attempts SET done_at = greatest(coalesce(done_at, $1), $1), outcome = $2, error_code = $3, class = $4
			WHERE id = (SELECT max(id) FROM attempts WHERE message_id = $5)`, now.UnixNano(), outcome, code, o.Class, c.Message.ID)
	}
	if err != nil {
		return false, fmt.Errorf("log attempt outcome: %w", err)
	}
	return moved, nil
}

// recordOutcome moves one claimed row by the transition its outcome names;
// moved is whether it did.
func recordOutcome(ctx context.Context, tx pgx.Tx, c campaign.Claim, runner string, o campaign.Outcome, code *int64, now time.Time) (moved bool, err error) {
	var n int64
	switch o.Transition() {
	case campaign.MoveRecordSent:
		tag, err := tx.Exec(ctx, recordSentSQL, o.WAMID, now.UnixNano(), c.Message.ID, c.Fence)
		if err != nil {
			return false, err
		}
		n = tag.RowsAffected()
	case campaign.MoveRecordHeld:
		tag, err := tx.Exec(ctx, recordHeldSQL, o.WAMID, now.UnixNano(), c.Message.ID, c.Fence)
		if err != nil {
			return false, err
		}
		n = tag.RowsAffected()
	case campaign.MoveRecordRetry, campaign.MovePutBack:
		tag, err := tx.Exec(ctx, recordRetrySQL, nanos(o.RetryAt), now.UnixNano(), boolInt(o.SpendsRetry), code, o.Error,
			c.Message.ID, c.Fence)
		if err != nil {
			return false, err
		}
		n = tag.RowsAffected()
	case campaign.MoveRecordFailed:
		tag, err := tx.Exec(ctx, recordFailedSQL, now.UnixNano(), code, o.Error, c.Message.ID, c.Fence)
		if err != nil {
			return false, err
		}
		n = tag.RowsAffected()
	case campaign.MoveRecordUnknown:
		tag, err := tx.Exec(ctx, recordUnknownSQL, now.UnixNano(), code, o.Error, c.Message.ID, c.Fence)
		if err != nil {
			return false, err
		}
		n = tag.RowsAffected()
	default:
		return false, fmt.Errorf("unknown outcome %d", o.Kind)
	}
	return n > 0, nil
}

// applyEffects carries out what an answer means beyond its row: an account
// that rests or is dropped, a campaign that pauses, a number suppressed.
func applyEffects(ctx context.Context, tx pgx.Tx, c campaign.Claim, o campaign.Outcome, now time.Time) error {
	acct := c.Account
	if o.ErrorCode != 0 {
		if _, err := tx.Exec(ctx, `UPDATE accounts SET last_error_code = $1 WHERE id = $2`, o.ErrorCode, acct.ID); err != nil {
			return fmt.Errorf("note error of %s: %w", acct.Name, err)
		}
	}
	if o.Throttle != nil || o.RateFactor > 0 {
		// The throttle reaction decided (ratelimit.Reaction); this stores
		// it. The rows are locked first: a bucket is read and written back.
		lock, where, args := `WHERE id = $1`, `WHERE a.id = $2`, []any{acct.ID}
		if o.Throttle != nil && o.Throttle.App {
			lock, where, args = `WHERE disabled = 0 AND removed_at IS NULL`, `WHERE a.disabled = 0`, nil
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM accounts `+lock+` ORDER BY id FOR UPDATE`, args...); err != nil {
			return fmt.Errorf("lock accounts: %w", err)
		}
		accts, err := loadAccounts(ctx, tx, where, args...)
		if err != nil {
			return err
		}
		for _, a := range accts {
			factor, rest := 0.0, time.Duration(0)
			if a.ID == acct.ID {
				factor = o.RateFactor
			}
			if o.Throttle != nil {
				rest = o.Throttle.Cooldown
			}
			h := a.Health.Reacted(now, factor, rest)
			// Book the tokens earned at the old rate before it changes.
			l := ratelimit.Limit{Rate: a.Limits.Rate, Burst: a.Limits.Burst}
			b := ratelimit.Bucket{Tokens: a.Tokens, At: a.At}.Relimit(a.Health.Scale(l, now), h.Scale(l, now), now)
			if _, err := tx.Exec(ctx, `UPDATE accounts SET cooldown_until = $1, throttle_streak = $2,
				last_throttle_at = $3, rate_factor = $4, rate_factor_at = $5, tokens = $6, tokens_at = $7 WHERE id = $8`,
				nanos(h.CooldownUntil), h.Streak, nanos(h.LastThrottle), h.Factor, nanos(h.FactorSince),
				b.Tokens, nanos(b.At), a.ID); err != nil {
				return fmt.Errorf("cool down %s: %w", a.Name, err)
			}
		}
	}
	if o.Restrict > 0 {
		if _, err := tx.Exec(ctx, `UPDATE accounts SET cooldown_until = greatest(cooldown_until, $1), restriction = $2
			WHERE id = $3`, now.Add(o.Restrict).UnixNano(), o.Error, acct.ID); err != nil {
			return fmt.Errorf("restrict %s: %w", acct.Name, err)
		}
	}
	if o.DropAccount {
		if err := dropAccount(ctx, tx, c.Message.CampaignID, acct.ID, o.Error, o.ErrorCode, now); err != nil {
			return err
		}
	}
	if o.Pause != "" {
		if _, err := tx.Exec(ctx, pauseCampaignSQL, o.Pause, c.Message.CampaignID); err != nil {
			return fmt.Errorf("pause campaign %d: %w", c.Message.CampaignID, err)
		}
	}
	if err := demoteOnTrouble(ctx, tx, acct.ID, o, now); err != nil {
		return err
	}
	if o.Suppress {
		if _, err := tx.Exec(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			c.Message.Phone, fmt.Sprintf("error %d in campaign %d", o.ErrorCode, c.Message.CampaignID), now.UnixNano()); err != nil {
			return fmt.Errorf("suppress %s: %w", c.Message.Phone, err)
		}
	}
	return nil
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
