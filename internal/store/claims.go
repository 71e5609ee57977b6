package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Claim takes the next due message of a campaign for runner, together with
// one token from the chosen account's bucket (and the global bucket when it
// is on) and one unit of that account's daily quota — all in one
// transaction, so no other process can spend the same token or quota.
//
// When nothing can be sent now it returns a *campaign.WaitError saying why
// and until when; campaign.ErrDone when no row is open; campaign.ErrPaused
// when the campaign is paused.
func (s *Store) Claim(ctx context.Context, campaignID int64, runner string, now time.Time) (campaign.Claim, error) {
	var (
		c    campaign.Claim
		done bool
	)
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = claim(ctx, tx, campaignID, runner, now)
		if errors.Is(err, campaign.ErrDone) {
			// Commit: the claim marked the campaign finished.
			done = true
			return nil
		}
		return err
	})
	if err == nil && done {
		return c, campaign.ErrDone
	}
	return c, err
}

func claim(ctx context.Context, tx *sql.Tx, campaignID int64, runner string, now time.Time) (campaign.Claim, error) {
	var c campaign.Claim
	var state campaign.CampaignState
	if err := tx.QueryRowContext(ctx, `SELECT state FROM campaigns WHERE id = ?`, campaignID).Scan(&state); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return c, fmt.Errorf("campaign %d: %w", campaignID, campaign.ErrNotFound)
		}
		return c, fmt.Errorf("read campaign %d: %w", campaignID, err)
	}
	if state == campaign.CampaignPaused {
		return c, campaign.ErrPaused
	}

	m, err := nextDue(ctx, tx, campaignID, now)
	if err != nil {
		return c, err
	}

	accts, err := loadAccounts(ctx, tx, `WHERE a.disabled = 0 ORDER BY a.id`)
	if err != nil {
		return c, err
	}
	if len(accts) == 0 {
		return c, &campaign.WaitError{Reason: campaign.WaitNoAccount}
	}
	cands := make([]ratelimit.Candidate, len(accts))
	for i, a := range accts {
		cands[i] = ratelimit.Candidate{
			Limit:    bucketLimit(a.Limits),
			Bucket:   ratelimit.Bucket{Tokens: a.Tokens, At: a.At},
			Used:     a.UsedToday,
			DailyCap: a.Limits.DailyCap,
		}
	}
	var (
		globalOn    bool
		globalLimit ratelimit.Limit
		globalB     ratelimit.Bucket
		globalAt    int64
	)
	if err := tx.QueryRowContext(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`).
		Scan(&globalOn, &globalLimit.Rate, &globalLimit.Burst, &globalB.Tokens, &globalAt); err != nil {
		return c, fmt.Errorf("read global limit: %w", err)
	}
	globalB.At = fromNanos(globalAt)
	var global *ratelimit.Bucket
	if globalOn {
		global = &globalB
	}

	d := ratelimit.Pick(now, cands, global, globalLimit)
	if d.Index < 0 {
		reason := campaign.WaitTokens
		switch d.Reason {
		case ratelimit.ReasonCapped:
			reason = campaign.WaitCapped
		case ratelimit.ReasonGlobal:
			reason = campaign.WaitGlobal
		}
		return c, &campaign.WaitError{Reason: reason, Until: d.Until}
	}

	a := accts[d.Index]
	b, ok := cands[d.Index].Bucket.TakeAt(cands[d.Index].Limit, now, 1)
	if !ok {
		return c, fmt.Errorf("account %s: picked without a token (bug)", a.Name)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET tokens = ?, tokens_at = ?, used_today = used_today + 1 WHERE id = ?`,
		b.Tokens, nanos(b.At), a.ID); err != nil {
		return c, fmt.Errorf("spend token of %s: %w", a.Name, err)
	}
	if global != nil {
		gb, ok := global.TakeAt(globalLimit, now, 1)
		if !ok {
			return c, errors.New("global bucket picked without a token (bug)")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE global_limit SET tokens = ?, tokens_at = ? WHERE id = 1`,
			gb.Tokens, nanos(gb.At)); err != nil {
			return c, fmt.Errorf("spend global token: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET state = 'sending', attempts = attempts + 1, account_id = ?,
		runner_id = ?, quota_epoch = ?, updated_at = ? WHERE id = ?`,
		a.ID, runner, a.QuotaEpoch, now.UnixNano(), m.ID); err != nil {
		return c, fmt.Errorf("claim message %d: %w", m.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at) VALUES (?, ?, ?)`,
		m.ID, a.ID, now.UnixNano()); err != nil {
		return c, fmt.Errorf("log attempt: %w", err)
	}
	m.State = campaign.Sending
	m.Attempts++
	return campaign.Claim{Message: m, Account: a.Account, QuotaEpoch: a.QuotaEpoch, At: now}, nil
}

// nextDue returns the next pending row whose retry time has come, or the
// reason there is none.
func nextDue(ctx context.Context, tx *sql.Tx, campaignID int64, now time.Time) (campaign.Message, error) {
	var (
		m      campaign.Message
		params string
	)
	err := tx.QueryRowContext(ctx, `SELECT id, line, input, phone, params, body, attempts, retries FROM messages
		WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at, id LIMIT 1`, campaignID, now.UnixNano()).
		Scan(&m.ID, &m.Line, &m.Input, &m.Phone, &params, &m.Body, &m.Attempts, &m.Retries)
	if err == nil {
		m.CampaignID = campaignID
		if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
			return m, fmt.Errorf("message %d params: %w", m.ID, err)
		}
		return m, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("find next message: %w", err)
	}
	var next sql.NullInt64
	var sending int
	if err := tx.QueryRowContext(ctx, `SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at END),
		count(CASE WHEN state = 'sending' THEN 1 END)
		FROM messages WHERE campaign_id = ? AND state IN ('pending', 'sending')`, campaignID).Scan(&next, &sending); err != nil {
		return m, fmt.Errorf("find next retry: %w", err)
	}
	switch {
	case next.Valid:
		return m, &campaign.WaitError{Reason: campaign.WaitRetry, Until: fromNanos(next.Int64)}
	case sending > 0:
		return m, &campaign.WaitError{Reason: campaign.WaitInFlight}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET state = 'finished', finished_at = ? WHERE id = ? AND state <> 'finished'`,
		now.UnixNano(), campaignID); err != nil {
		return m, fmt.Errorf("finish campaign %d: %w", campaignID, err)
	}
	return m, campaign.ErrDone
}

// Record stores what became of a claimed message. A sent outcome is always
// kept, even if the row was meanwhile declared unknown: the wamid is the
// truth. Other outcomes apply only while the row is still this claim's.
func (s *Store) Record(ctx context.Context, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return record(ctx, tx, c, runner, o, now)
	})
}

func record(ctx context.Context, tx *sql.Tx, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) error {
	var (
		res     sql.Result
		err     error
		outcome string
		code    = sql.NullInt64{Int64: int64(o.ErrorCode), Valid: o.ErrorCode != 0}
	)
	switch o.Kind {
	case campaign.OutcomeSent:
		outcome = "sent"
		res, err = tx.ExecContext(ctx, `UPDATE messages SET state = 'sent', wamid = ?, sent_at = ?, updated_at = ?,
			error_code = NULL, error_message = NULL WHERE id = ? AND state IN ('sending', 'unknown')`,
			o.WAMID, now.UnixNano(), now.UnixNano(), c.Message.ID)
	case campaign.OutcomeRetry:
		outcome = "retry"
		res, err = tx.ExecContext(ctx, `UPDATE messages SET state = 'pending', next_attempt_at = ?, updated_at = ?,
			retries = retries + ?, error_code = ?, error_message = ? WHERE id = ? AND state = 'sending' AND runner_id = ?`,
			nanos(o.RetryAt), now.UnixNano(), o.SpendsRetry, code, o.Error, c.Message.ID, runner)
	case campaign.OutcomeFailed:
		outcome = "failed"
		res, err = tx.ExecContext(ctx, `UPDATE messages SET state = 'failed', updated_at = ?,
			error_code = ?, error_message = ? WHERE id = ? AND state = 'sending' AND runner_id = ?`,
			now.UnixNano(), code, o.Error, c.Message.ID, runner)
	case campaign.OutcomeUnknown:
		outcome = "unknown"
		res, err = tx.ExecContext(ctx, `UPDATE messages SET state = 'unknown', updated_at = ?,
			error_code = ?, error_message = ? WHERE id = ? AND state = 'sending' AND runner_id = ?`,
			now.UnixNano(), code, o.Error, c.Message.ID, runner)
	default:
		return fmt.Errorf("record message %d: unknown outcome %d", c.Message.ID, o.Kind)
	}
	if err != nil {
		return fmt.Errorf("record message %d %s: %w", c.Message.ID, outcome, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// The row is no longer ours (declared unknown by a recovering
		// runner): leave it as the operator will see it.
		return nil
	}
	if o.Refund {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = max(used_today - 1, 0)
			WHERE id = ? AND quota_epoch = ?`, c.Account.ID, c.QuotaEpoch); err != nil {
			return fmt.Errorf("refund quota of %s: %w", c.Account.Name, err)
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?, outcome = ?, error_code = ?
		WHERE id = (SELECT max(id) FROM attempts WHERE message_id = ?)`, now.UnixNano(), outcome, code, c.Message.ID)
	if err != nil {
		return fmt.Errorf("log attempt outcome: %w", err)
	}
	return nil
}

// RegisterRunner announces a sender process working on a campaign.
func (s *Store) RegisterRunner(ctx context.Context, r campaign.Runner) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO runners (id, campaign_id, host, pid, started_at, heartbeat_at)
			VALUES (?, ?, ?, ?, ?, ?)`, r.ID, r.CampaignID, r.Host, r.PID, nanos(r.StartedAt), nanos(r.HeartbeatAt))
		if err != nil {
			return fmt.Errorf("register runner: %w", err)
		}
		return nil
	})
}

// Heartbeat marks a runner alive at now.
func (s *Store) Heartbeat(ctx context.Context, id string, now time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runners SET heartbeat_at = ? WHERE id = ?`, now.UnixNano(), id)
		return err
	})
}

// UnregisterRunner removes a runner that stopped cleanly.
func (s *Store) UnregisterRunner(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id)
		return err
	})
}

// RecoverOrphans turns rows left in 'sending' by runners that are gone into
// 'unknown': their request may have reached the API, so they are not resent
// without an operator's decision. dead says whether a runner is gone; rows
// whose runner is not registered at all are always orphans. It returns how
// many rows it moved.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	var moved int
	err := s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, host, pid, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var r campaign.Runner
			var started, beat int64
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &r.PID, &started, &beat); err != nil {
				rows.Close()
				return err
			}
			r.StartedAt, r.HeartbeatAt = fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = ?`, id); err != nil {
				return fmt.Errorf("remove dead runner: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE messages SET state = 'unknown', updated_at = ?,
			error_message = 'interrupted: the request may have reached the API, so it is not resent automatically'
			WHERE state = 'sending' AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners))`, now.UnixNano())
		if err != nil {
			return fmt.Errorf("mark orphaned rows unknown: %w", err)
		}
		n, _ := res.RowsAffected()
		moved = int(n)
		if moved > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?, outcome = 'unknown'
				WHERE done_at IS NULL AND message_id IN (SELECT id FROM messages WHERE state = 'unknown')`, now.UnixNano())
		}
		return err
	})
	return moved, err
}
