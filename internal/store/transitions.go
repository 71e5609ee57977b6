package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The only statements that change a message's state. Each is named for a
// campaign.Transition and built from its row of campaign.Transitions
// (statesql.go): it
// sets the transition's target state and applies only to rows in one of
// its source states, so a move the table does not allow is a no-op (or an
// error where the caller knows how many rows must move). Bulk moves stay
// one statement for many ids: claims and sent outcomes are the hot path.
var (
	// A claim keeps its rows' counts itself (tally.go): it flips tally.
	claimSQL = `UPDATE messages SET ` + toSQL(campaign.MoveClaim) + `, attempts = attempts + 1, account_id = ?,
		runner_id = ?, quota_epoch = ?, updated_at = ?, tally = 1 - tally, window_wait = 0 WHERE ` + fromSQL(campaign.MoveClaim, "state") + ` AND id IN (`
	suppressAtSendSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSuppressAtSend) + `, updated_at = ?, error_code = ?,
		error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveSuppressAtSend, "state")
	// recordSentTallySQL moves rows still sending under the claim's
	// account and keeps their counts itself (tally.go); recordSentBulkSQL
	// moves every row it may (the triggers count them).
	recordSentTallySQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = v.column2, sent_at = v.column3,
		updated_at = v.column3, error_code = NULL, error_message = NULL, tally = 1 - tally
		FROM (VALUES %s) AS v
		WHERE messages.id = v.column1 AND ` + "messages.state = " + quote(campaign.Sending) + ` AND messages.account_id = v.column4`
	recordSentBulkSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = v.column2, sent_at = v.column3,
		updated_at = v.column3, error_code = NULL, error_message = NULL
		FROM (VALUES %s) AS v
		WHERE messages.id = v.column1 AND ` + fromSQL(campaign.MoveRecordSent, "messages.state")
	recordSentSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = ?, sent_at = ?, updated_at = ?,
		error_code = NULL, error_message = NULL WHERE id = ? AND ` + fromSQL(campaign.MoveRecordSent, "state")
	recordHeldSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordHeld) + `, wamid = ?, sent_at = ?, updated_at = ?, delivery = ` +
		quote(campaign.DeliveryHeld) + `, error_code = NULL, error_message = NULL WHERE id = ? AND ` + fromSQL(campaign.MoveRecordHeld, "state")
	// A retry, failure or unknown applies only while the row is still this
	// runner's claim: a rescued row stays as the operator sees it.
	recordRetrySQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordRetry) + `, next_attempt_at = ?, updated_at = ?,
		retries = retries + ?, error_code = ?, error_message = ? WHERE id = ? AND ` +
		fromSQL(campaign.MoveRecordRetry, "state") + ` AND runner_id = ?`
	recordFailedSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordFailed) + `, updated_at = ?,
		error_code = ?, error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveRecordFailed, "state") + ` AND runner_id = ?`
	recordUnknownSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordUnknown) + `, updated_at = ?,
		error_code = ?, error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveRecordUnknown, "state") + ` AND runner_id = ?`
	rescueSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRescue) + `, updated_at = ?, error_message = ?
		WHERE ` + fromSQL(campaign.MoveRescue, "state") + ` AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners))`
	skipElsewhereSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSkipElsewhere) + `, updated_at = ?, error_code = ?,
		error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveSkipElsewhere, "state")
	expireSQL = `UPDATE messages SET ` + toSQL(campaign.MoveExpire) + `, updated_at = ?, error_message = ?
		WHERE campaign_id = ? AND ` + fromSQL(campaign.MoveExpire, "state")
	failNeverOpenSQL = `UPDATE messages SET ` + toSQL(campaign.MoveFailNeverOpen) + `, updated_at = ?, error_message = ?
		WHERE id = ? AND ` + fromSQL(campaign.MoveFailNeverOpen, "state")
	// The status webhooks' moves: wamid guards tie each to the request the
	// webhook speaks of. None fails or sends again a message the person
	// has (receivedSQL, from campaign.DeliveryLadder).
	adoptSendSQL = `UPDATE messages SET ` + toSQL(campaign.MoveAdoptSend) + `, wamid = ?, sent_at = ?, updated_at = ?,
		error_code = NULL, error_message = NULL, runner_id = NULL
		WHERE id = ? AND ` + fromSQL(campaign.MoveAdoptSend, "state") + ` AND wamid IS NULL`
	failAfterSendSQL = `UPDATE messages SET ` + toSQL(campaign.MoveFailAfterSend) + `, delivery = ` + quote(campaign.DeliveryFailed) + `, failed_after_send = 1,
		error_code = ?, error_message = ?, updated_at = ? WHERE id = ? AND ` + fromSQL(campaign.MoveFailAfterSend, "state") + ` AND wamid = ?
		AND NOT ` + receivedSQL("delivery")
	rescheduleUndeliveredSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRescheduleUndelivered) + `, next_attempt_at = ?, wamid = NULL,
		delivery = NULL, delivered_at = NULL, read_at = NULL, runner_id = NULL,
		error_code = ?, error_message = ?, updated_at = ? WHERE id = ? AND ` + fromSQL(campaign.MoveRescheduleUndelivered, "state") + ` AND wamid = ?
		AND NOT ` + receivedSQL("delivery")
	requeueUndeliveredSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRequeueUndelivered) + `, retries = 0, next_attempt_at = 0,
		runner_id = NULL, wamid = NULL, delivery = NULL, delivered_at = NULL, read_at = NULL, updated_at = ?
		WHERE campaign_id = ? AND ` + fromSQL(campaign.MoveRequeueUndelivered, "state") + ` AND NOT ` + receivedSQL("delivery") + ` AND sent_at < ?`
	rescueCampaignSQL = `UPDATE messages SET ` + toSQL(campaign.MoveRescue) + `, updated_at = ?, error_message = ?
		WHERE campaign_id = ? AND ` + fromSQL(campaign.MoveRescue, "state") + ` AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners))`
)

// requeueSQL moves a campaign's rows back to pending with a fresh retry
// budget, for the operator's two requeue transitions.
func requeueSQL(t campaign.Transition) string {
	return `UPDATE messages SET ` + toSQL(t) + `, retries = 0, next_attempt_at = 0, runner_id = NULL, updated_at = ?
		WHERE campaign_id = ? AND ` + fromSQL(t, "state")
}

// claimRows moves due pending rows to sending for runner, through one
// account. Their state was read in the same transaction, so every one must
// move; one that does not is a bug, not a race.
func claimRows(ctx context.Context, tx *Tx, accountID int64, runner string, epoch int64, now time.Time, ids []any) error {
	size := padded(len(ids))
	args := append(make([]any, 0, 4+size), accountID, runner, epoch, now.UnixNano())
	args = append(args, ids...)
	for len(args) < 4+size {
		args = append(args, 0) // no row has id 0
	}
	res, err := tx.ExecContext(ctx, claimSQL+repeated(size, "?")+`)`, args...)
	if err != nil {
		return fmt.Errorf("claim messages: %w", err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(ids)) {
		return fmt.Errorf("claim messages: %d of %d rows were pending (bug)", n, len(ids))
	}
	return nil
}

// suppressAtSend fails a due pending row whose number is on the
// suppression list.
func suppressAtSend(ctx context.Context, tx *Tx, id int64, why string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, suppressAtSendSQL, now.UnixNano(), campaign.CodeSuppressed, "suppressed: "+why, id); err != nil {
		return fmt.Errorf("skip suppressed message %d: %w", id, err)
	}
	return nil
}

// skipElsewhere fails a due pending row whose recipient another host holds
// (limits.ReasonElsewhere), saying so.
func skipElsewhere(ctx context.Context, tx *Tx, id int64, why string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, skipElsewhereSQL, now.UnixNano(), campaign.CodeElsewhere, why, id); err != nil {
		return fmt.Errorf("skip message %d: %w", id, err)
	}
	return nil
}

// expirePending ends a campaign's pending rows: its validity ran out.
func expirePending(ctx context.Context, tx *Tx, campaignID int64, why string, now time.Time) error {
	if tx.send {
		return errUnbounded // may be every row of the campaign
	}
	if _, err := tx.ExecContext(ctx, expireSQL, now.UnixNano(), why, campaignID); err != nil {
		return fmt.Errorf("expire messages of campaign %d: %w", campaignID, err)
	}
	return nil
}

// failNeverOpen fails a pending row whose send window never opens.
func failNeverOpen(ctx context.Context, tx *Tx, id int64, why string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, failNeverOpenSQL, now.UnixNano(), why, id); err != nil {
		return fmt.Errorf("fail message %d: %w", id, err)
	}
	return nil
}

// recordSentMany stores size plain sent outcomes (the first n real, the
// rest padding) in two statements, one for the rows, one for their
// attempts; args holds (id, wamid, at, account) and attArgs (attempt id, at,
// class) per row.
//
// When every row is still sending under its claim and every attempt is the
// claim's and has no answer yet — all but always — the statements keep the
// counts themselves (tally.go).
// Otherwise (a row declared unknown, claimed again, answered twice) they
// run again without, and the triggers count.
func recordSentMany(ctx context.Context, tx *Tx, rs []campaign.Result, size int, args, attArgs []any) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT sent`); err != nil {
		return err
	}
	rows := fmt.Sprintf(recordSentTallySQL, repeated(size, "(?, ?, ?, ?)"))
	attempts := `UPDATE attempts SET done_at = v.column2, outcome = 'sent', error_code = NULL, class = v.column3, tally = 1 - tally
		FROM (VALUES ` + repeated(size, "(?, ?, ?, ?, ?)") + `) AS v
		WHERE attempts.id = v.column1 AND attempts.outcome IS NULL AND attempts.class IS NULL
			AND attempts.account_id = v.column4 AND attempts.claimed_at = v.column5`
	tallied := make([]any, 0, 5*size)
	for i := 0; i < size; i++ {
		tallied = append(tallied, attArgs[3*i:3*i+3]...)
		if i < len(rs) {
			tallied = append(tallied, rs[i].Claim.Account.ID, rs[i].Claim.At.UnixNano())
		} else {
			tallied = append(tallied, 0, 0)
		}
	}
	all := true
	for _, st := range []struct {
		q    string
		args []any
	}{{rows, args}, {attempts, tallied}} {
		res, err := tx.ExecContext(ctx, st.q, st.args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(rs)) {
			all = false
			break
		}
	}
	if all {
		var t tally
		for _, r := range rs {
			c := r.Claim
			t.move(c.Message.CampaignID, c.Account.ID, campaign.Sending, c.Account.ID, campaign.Sent)
			t.answer(c.Message.CampaignID, c.Account.ID, c.At.UnixNano(), r.Outcome.Class, r.At)
		}
		if err := t.write(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `RELEASE sent`)
		return err
	}
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO sent`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `RELEASE sent`); err != nil {
		return err
	}
	plain := make([]any, 0, 3*size)
	for i := 0; i < len(args); i += 4 {
		plain = append(plain, args[i:i+3]...)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(recordSentBulkSQL, repeated(size, "(?, ?, ?)")), plain...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE attempts SET done_at = v.column2, outcome = 'sent', error_code = NULL, class = v.column3
		FROM (VALUES `+repeated(size, "(?, ?, ?)")+`) AS v WHERE attempts.id = v.column1`, attArgs...)
	return err
}

// recordOutcome moves one claimed row by the transition its outcome names.
func recordOutcome(ctx context.Context, tx *Tx, c campaign.Claim, runner string, o campaign.Outcome, now time.Time) (sql.Result, error) {
	code := sql.NullInt64{Int64: int64(o.ErrorCode), Valid: o.ErrorCode != 0}
	switch o.Transition() {
	case campaign.MoveRecordSent:
		return tx.ExecContext(ctx, recordSentSQL, o.WAMID, now.UnixNano(), now.UnixNano(), c.Message.ID)
	case campaign.MoveRecordHeld:
		return tx.ExecContext(ctx, recordHeldSQL, o.WAMID, now.UnixNano(), now.UnixNano(), c.Message.ID)
	case campaign.MoveRecordRetry, campaign.MovePutBack:
		return tx.ExecContext(ctx, recordRetrySQL, nanos(o.RetryAt), now.UnixNano(), o.SpendsRetry, code, o.Error,
			c.Message.ID, runner)
	case campaign.MoveRecordFailed:
		return tx.ExecContext(ctx, recordFailedSQL, now.UnixNano(), code, o.Error, c.Message.ID, runner)
	case campaign.MoveRecordUnknown:
		return tx.ExecContext(ctx, recordUnknownSQL, now.UnixNano(), code, o.Error, c.Message.ID, runner)
	}
	return nil, fmt.Errorf("unknown outcome %d", o.Kind)
}

// rescue declares unknown the sending rows whose runner is not registered
// (campaignID 0: of every campaign) and returns their ids, counting them
// by campaign in perCampaign.
func rescue(ctx context.Context, tx *Tx, campaignID int64, now time.Time, perCampaign map[int64]int) ([]any, error) {
	q, args := rescueSQL, []any{now.UnixNano(), orphanedNote}
	if campaignID != 0 {
		q, args = rescueCampaignSQL, append(args, campaignID)
	}
	rows, err := tx.QueryContext(ctx, q+` RETURNING id, campaign_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("mark orphaned rows unknown: %w", err)
	}
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var id, c int64
		if err := rows.Scan(&id, &c); err != nil {
			return nil, fmt.Errorf("mark orphaned rows unknown: %w", err)
		}
		ids = append(ids, id)
		perCampaign[c]++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mark orphaned rows unknown: %w", err)
	}
	return ids, nil
}

// requeueFailed moves a campaign's failed rows back to pending: those with
// one of codes, or all when codes is empty.
func requeueFailed(ctx context.Context, tx *Tx, campaignID int64, codes []int, now time.Time) (int64, error) {
	q, args := requeueSQL(campaign.MoveRequeueFailed), []any{now.UnixNano(), campaignID}
	var res sql.Result
	var err error
	if len(codes) == 0 {
		res, err = tx.ExecContext(ctx, q, args...)
	} else {
		for _, c := range codes {
			args = append(args, c)
		}
		// Not through the statement cache: the query text varies with codes.
		res, err = tx.tx.ExecContext(tx.ctx, q+` AND error_code IN (`+repeated(len(codes), "?")+`)`, args...)
	}
	if err != nil {
		return 0, fmt.Errorf("requeue failed rows: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// requeueUnknown moves a campaign's unknown rows back to pending.
func requeueUnknown(ctx context.Context, tx *Tx, campaignID int64, now time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, requeueSQL(campaign.MoveRequeueUnknown), now.UnixNano(), campaignID)
	if err != nil {
		return 0, fmt.Errorf("requeue unknown rows: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// The only statements that change a campaign's state, one per
// campaign.CampaignTransition, built from campaign.CampaignTransitions.
var (
	pauseCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignPause) + `, pause_reason = ?
		WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignPause, "state") + ` AND cancelled_at IS NULL`
	// pauseTemplateSQL pauses every campaign sending a template that a
	// template status webhook reported paused or disabled.
	pauseTemplateSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignPause) + `, pause_reason = ?
		WHERE ` + campaignFromSQL(campaign.CampaignPause, "state") + ` AND cancelled_at IS NULL
		AND kind = 'template' AND template = ? AND (? = '' OR lang = ?)`
	pauseNoAccountSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignPauseNoAccount) + `, pause_reason = ?
		WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignPauseNoAccount, "state")
	resumeCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignResume) + `, pause_reason = ''
		WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignResume, "state")
	finishCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignFinish) + `, finished_at = ?
		WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignFinish, "state")
	reopenCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignReopen) + `, finished_at = NULL
		WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignReopen, "state")
	cancelCampaignSQL = `UPDATE campaigns SET ` + campaignToSQL(campaign.CampaignCancel) + `, finished_at = ?, cancelled_at = ?,
		pause_reason = '' WHERE id = ? AND ` + campaignFromSQL(campaign.CampaignCancel, "state") + ` AND cancelled_at IS NULL`
)

// pauseCampaign pauses a running campaign for reason.
func pauseCampaign(ctx context.Context, tx *Tx, id int64, reason string) error {
	if _, err := tx.ExecContext(ctx, pauseCampaignSQL, reason, id); err != nil {
		return fmt.Errorf("pause campaign %d: %w", id, err)
	}
	return nil
}

// pauseNoAccount pauses a campaign that has no usable account left.
func pauseNoAccount(ctx context.Context, tx *Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, pauseNoAccountSQL, campaign.NoUsableAccountReason, id); err != nil {
		return fmt.Errorf("pause campaign %d: %w", id, err)
	}
	return nil
}

// resumeCampaign runs a paused campaign again.
func resumeCampaign(ctx context.Context, tx *Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, resumeCampaignSQL, id); err != nil {
		return fmt.Errorf("resume campaign %d: %w", id, err)
	}
	return nil
}

// finishCampaign ends a campaign with no open row.
func finishCampaign(ctx context.Context, tx *Tx, id int64, now time.Time) error {
	if _, err := tx.ExecContext(ctx, finishCampaignSQL, now.UnixNano(), id); err != nil {
		return fmt.Errorf("finish campaign %d: %w", id, err)
	}
	return nil
}

// reopenCampaign runs a finished campaign again.
func reopenCampaign(ctx context.Context, tx *Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, reopenCampaignSQL, id); err != nil {
		return fmt.Errorf("reopen campaign %d: %w", id, err)
	}
	return nil
}

// cancelCampaign ends a running or paused campaign for good.
func cancelCampaign(ctx context.Context, tx *Tx, id int64, now time.Time) error {
	if _, err := tx.ExecContext(ctx, cancelCampaignSQL, now.UnixNano(), now.UnixNano(), id); err != nil {
		return fmt.Errorf("cancel campaign %d: %w", id, err)
	}
	return nil
}
