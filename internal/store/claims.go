package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// RecordAll stores several outcomes in one transaction (a group commit).
// Outcomes refused by their fence change nothing; the others are stored
// and the error is a *campaign.FenceError naming the refused rows.
func (s *Store) RecordAll(ctx context.Context, runner string, rs []campaign.Result) error {
	var refused []int64
	err := s.writeSend(ctx, func(tx *Tx) (err error) {
		refused, err = recordAll(ctx, tx, runner, rs)
		return err
	})
	return fenced(refused, err)
}

// fenced is a batch's error: err, else a FenceError when rows were
// refused by their fence.
func fenced(refused []int64, err error) error {
	if err == nil && len(refused) > 0 {
		return &campaign.FenceError{Rows: refused}
	}
	return err
}

// recordAll stores outcomes and returns the rows whose fence refused them.
func recordAll(ctx context.Context, tx *Tx, runner string, rs []campaign.Result) ([]int64, error) {
	var (
		plain   []campaign.Result
		wamids  []any
		refused []int64
	)
	for _, r := range rs {
		if r.Outcome.Kind == campaign.OutcomeSent && r.Outcome.WAMID != "" {
			wamids = append(wamids, r.Outcome.WAMID)
		}
		if plainSent(r) {
			plain = append(plain, r)
			continue
		}
		moved, err := record(ctx, tx, r.Claim, runner, r.Outcome, r.At)
		if err != nil {
			return nil, err
		}
		if !moved {
			refused = append(refused, r.Claim.Message.ID)
		}
	}
	more, err := recordSent(ctx, tx, plain)
	if err != nil {
		return nil, err
	}
	return append(refused, more...), linkWaitingStatuses(ctx, tx, wamids)
}

// plainSent reports whether r is a message accepted with nothing more to
// it: what most outcomes are, and what recordSent stores in bulk.
func plainSent(r campaign.Result) bool {
	o := r.Outcome
	return o.Kind == campaign.OutcomeSent && r.Claim.AttemptID != 0 && o.ErrorCode == 0 && !o.Refund &&
		o.Throttle == nil && o.RateFactor == 0 && o.Restrict == 0 && !o.DropAccount && o.Pause == "" && !o.Suppress && !o.Held
}

// padded is the size a multi-row statement of the sending path takes for
// n rows: 8, then steps of 32. The rest are padding rows that match or
// insert nothing (id 0), so a few prepared statements serve every batch;
// one for each exact size was a statement prepared, twice (database/sql
// prepares on the pool, then on the writer), in most transactions. A
// padding row costs its arguments and a lookup.
func padded(n int) int {
	if n <= 8 {
		return 8
	}
	return (n + 31) / 32 * 32
}

// maxSentBatch bounds the outcomes recordSent stores in one statement.
const maxSentBatch = 256

// recordSent stores what record stores for plain sent outcomes, two
// statements per batch instead of two per message. A row no longer
// 'sending' (or 'unknown') under its claim's fence is left alone, as
// record leaves it, and returned.
func recordSent(ctx context.Context, tx *Tx, rs []campaign.Result) ([]int64, error) {
	var refused []int64
	for len(rs) > 0 {
		n := min(len(rs), maxSentBatch)
		size := padded(n)
		msgArgs := make([]any, 0, 5*size)
		attArgs := make([]any, 0, 3*size)
		logArgs := make([]any, 0, 3*size)
		for i := range size {
			if i >= n {
				msgArgs = append(msgArgs, 0, "", 0, 0, 0)
				attArgs = append(attArgs, 0, 0, "")
				logArgs = append(logArgs, 0, "", 0)
				continue
			}
			r := rs[i]
			msgArgs = append(msgArgs, r.Claim.Message.ID, r.Outcome.WAMID, r.At.UnixNano(), r.Claim.Account.ID, r.Claim.Fence)
			attArgs = append(attArgs, r.Claim.AttemptID, r.At.UnixNano(), r.Outcome.Class)
			logArgs = append(logArgs, r.Claim.Account.ID, r.Claim.Message.Phone, r.At.UnixNano())
		}
		more, err := recordSentMany(ctx, tx, rs[:n], size, msgArgs, attArgs)
		if err != nil {
			return nil, fmt.Errorf("record %d messages sent: %w", n, err)
		}
		refused = append(refused, more...)
		if _, err := tx.ExecContext(ctx, `UPDATE contact_log SET sent_at = max(sent_at, v.column3)
			FROM (VALUES `+repeated(size, "(?, ?, ?)")+`) AS v
			WHERE contact_log.account_id = v.column1 AND contact_log.phone = v.column2`, logArgs...); err != nil {
			return nil, fmt.Errorf("log %d sends: %w", n, err)
		}
		rs = rs[n:]
	}
	return refused, nil
}

// record stores one outcome; moved is false when the row's fence refused
// it (what the answer says about the account and campaign is kept).
func record(ctx context.Context, tx *Tx, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) (moved bool, err error) {
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
	code := sql.NullInt64{Int64: int64(o.ErrorCode), Valid: o.ErrorCode != 0}
	res, err := recordOutcome(ctx, tx, c, runner, o, now)
	if err != nil {
		return false, fmt.Errorf("record message %d %s: %w", c.Message.ID, outcome, err)
	}
	// A row no longer this claim's (its lease ran out, or it was claimed
	// again) is left to its holder, but what the answer says about the
	// account and campaign is still true.
	n, _ := res.RowsAffected()
	if moved = n > 0; moved && o.Refund {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = max(used_today - 1, 0)
			WHERE id = ? AND quota_epoch = ?`, c.Account.ID, c.QuotaEpoch); err != nil {
			return false, fmt.Errorf("refund quota of %s: %w", c.Account.Name, err)
		}
		if err := unlogContact(ctx, tx, c); err != nil {
			return false, err
		}
		if c.Shared != nil {
			if err := queueRefund(ctx, tx, c.Shared, now); err != nil {
				return false, err
			}
		}
	}
	if moved && o.Kind == campaign.OutcomeSent {
		if _, err := tx.ExecContext(ctx, `UPDATE contact_log SET sent_at = max(sent_at, ?) WHERE account_id = ? AND phone = ?`,
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
		_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = max(coalesce(done_at, ?1), ?1), outcome = ?2, error_code = ?3, class = ?4
			WHERE id = ?5`, now.UnixNano(), outcome, code, o.Class, c.AttemptID)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = max(coalesce(done_at, ?1), ?1), outcome = ?2, error_code = ?3, class = ?4
			WHERE id = (SELECT max(id) FROM attempts WHERE message_id = ?5)`, now.UnixNano(), outcome, code, o.Class, c.Message.ID)
	}
	if err != nil {
		return false, fmt.Errorf("log attempt outcome: %w", err)
	}
	return moved, nil
}

// applyEffects carries out what an answer means beyond its row: an account
// that rests or is dropped, a campaign that pauses, a number suppressed.
func applyEffects(ctx context.Context, tx *Tx, c campaign.Claim, o campaign.Outcome, now time.Time) error {
	acct := c.Account
	if o.ErrorCode != 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET last_error_code = ? WHERE id = ?`, o.ErrorCode, acct.ID); err != nil {
			return fmt.Errorf("note error of %s: %w", acct.Name, err)
		}
	}
	if o.Throttle != nil || o.RateFactor > 0 {
		// The throttle reaction decided (ratelimit.Reaction); this stores it.
		where, args := `WHERE a.id = ?`, []any{acct.ID}
		if o.Throttle != nil && o.Throttle.App {
			where, args = `WHERE a.disabled = 0`, nil
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
			h := a.health.Reacted(now, factor, rest)
			// Book the tokens earned at the old rate before it changes.
			b := a.bucket().Relimit(a.limit(now), h.Scale(bucketLimit(a.Limits), now), now)
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = ?, throttle_streak = ?,
				last_throttle_at = ?, rate_factor = ?, rate_factor_at = ?, tokens = ?, tokens_at = ? WHERE id = ?`,
				nanos(h.CooldownUntil), h.Streak, nanos(h.LastThrottle), h.Factor, nanos(h.FactorSince),
				b.Tokens, nanos(b.At), a.ID); err != nil {
				return fmt.Errorf("cool down %s: %w", a.Name, err)
			}
		}
	}
	if o.Restrict > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = max(cooldown_until, ?), restriction = ?
			WHERE id = ?`, now.Add(o.Restrict).UnixNano(), o.Error, acct.ID); err != nil {
			return fmt.Errorf("restrict %s: %w", acct.Name, err)
		}
	}
	if o.DropAccount {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO campaign_accounts (campaign_id, account_id, reason, error_code, at)
			VALUES (?, ?, ?, ?, ?)`, c.Message.CampaignID, acct.ID, o.Error, o.ErrorCode, now.UnixNano()); err != nil {
			return fmt.Errorf("drop %s from campaign: %w", acct.Name, err)
		}
	}
	if o.Pause != "" {
		if err := pauseCampaign(ctx, tx, c.Message.CampaignID, o.Pause); err != nil {
			return err
		}
	}
	if err := demoteOnTrouble(ctx, tx, acct.ID, o, now); err != nil {
		return err
	}
	if o.Suppress {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)`,
			c.Message.Phone, fmt.Sprintf("error %d in campaign %d", o.ErrorCode, c.Message.CampaignID), now.UnixNano()); err != nil {
			return fmt.Errorf("suppress %s: %w", c.Message.Phone, err)
		}
	}
	return nil
}

// RegisterRunner announces a sender process working on a campaign.
func (s *Store) RegisterRunner(ctx context.Context, r campaign.Runner) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO runners (id, campaign_id, host, pid, pid_space, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.ID, r.CampaignID, r.Host, r.PID, r.Space, nanos(r.StartedAt), nanos(r.HeartbeatAt))
		if err != nil {
			return fmt.Errorf("register runner: %w", err)
		}
		return nil
	})
}

// Heartbeat marks a runner alive at now and extends the leases of its rows
// in flight by campaign.LeaseTerm. It returns an error wrapping
// campaign.ErrNotFound when the runner is not registered (another process
// took it for dead): the caller registers again, or its next claims would
// be orphans at once.
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	return s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runners SET heartbeat_at = ? WHERE id = ?`, now.UnixNano(), id)
		if err != nil {
			return fmt.Errorf("heartbeat of runner %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("heartbeat of runner %s: %w", id, campaign.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, extendLeasesSQL, now.Add(campaign.LeaseTerm).UnixNano(), id); err != nil {
			return fmt.Errorf("extend the leases of runner %s: %w", id, err)
		}
		return nil
	})
}

// Start marks the claims' requests started, each only while its row is
// still that claim (campaign.FenceOK) and its request not yet started. It
// returns the rows refused: their lease was lost, so their requests must
// not be made.
func (s *Store) Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) (refused []int64, err error) {
	err = s.writeSend(ctx, func(tx *Tx) error {
		refused = nil // a retried transaction starts over
		for _, c := range cs {
			res, err := tx.ExecContext(ctx, startSQL, c.Message.ID, c.Fence)
			if err != nil {
				return fmt.Errorf("start the request of message %d: %w", c.Message.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				refused = append(refused, c.Message.ID)
			}
		}
		return nil
	})
	return refused, err
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id)
		return err
	})
}

// RecoverOrphans ends the leases of rows in flight that ran out by now or
// whose runner is gone (dead says which; a gone runner is unregistered),
// as campaign.LeaseExpiry says: a row whose request never started goes
// back to pending; one whose request may have reached the API becomes
// unknown, never resent without an operator's decision. It returns how
// many rows became unknown, by campaign: rows of any campaign are moved,
// and each is its own campaign's to resend.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	return recoverOrphans(ctx, s, 0, now, dead)
}

// Rescue is RecoverOrphans for one campaign's rows, cheap enough for a
// running engine to call every few seconds (it reads the rows through the
// campaign's index): a process that died mid-run blocks the others only
// until its lease runs out or its runner counts as dead. Dead runners of
// any campaign are unregistered. SQLite's one writer makes one rescuer
// run at a time.
func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	if campaignID <= 0 {
		return 0, fmt.Errorf("rescue: campaign id %d: %w", campaignID, campaign.ErrNotFound)
	}
	moved, err := recoverOrphans(ctx, s, campaignID, now, dead)
	return moved[campaignID], err
}

// orphanedNote is what an orphaned row's error message says.
const orphanedNote = "interrupted: the request may have reached the API, so it is not resent automatically"

// recoverOrphans does RecoverOrphans (campaignID 0: every campaign) and
// Rescue.
func recoverOrphans(ctx context.Context, s *Store, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	var moved map[int64]int
	err := s.write(ctx, func(tx *Tx) error {
		moved = map[int64]int{}
		rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, host, pid, pid_space, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var r campaign.Runner
			var started, beat int64
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &r.PID, &r.Space, &started, &beat); err != nil {
				rows.Close()
				return fmt.Errorf("list runners: %w", err)
			}
			r.StartedAt, r.HeartbeatAt = fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		// A runner known dead, or not registered, holds its leases no
		// longer: the faster path.
		for _, id := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id); err != nil {
				return fmt.Errorf("remove dead runner: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, endLeasesSQL, campaignID); err != nil {
			return fmt.Errorf("end the leases of dead runners: %w", err)
		}
		return expireLeases(ctx, tx, campaignID, now, moved)
	})
	return moved, err
}

// repeated is n copies of one, comma-separated.
func repeated(n int, one string) string {
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}
