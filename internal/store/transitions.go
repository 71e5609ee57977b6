package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/statesql"
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
	// It raises the fence (attempts) and leases the rows to the runner
	// (their attempts, inserted unstarted, carry the start mark).
	claimSQL = `UPDATE messages SET ` + toSQL(campaign.MoveClaim) + `, attempts = attempts + 1, account_id = v.column2,
		runner_id = ?1, quota_epoch = v.column3, updated_at = ?2, lease_until = ?3, tally = 1 - tally, window_wait = 0
		FROM (VALUES %s) AS v WHERE messages.id = v.column1 AND ` + fromSQL(campaign.MoveClaim, "messages.state")
	suppressAtSendSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSuppressAtSend) + `, updated_at = ?, error_code = ?,
		error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveSuppressAtSend, "state")
	// recordSentTallySQL moves rows still sending under the claim's
	// account and keeps their counts itself (tally.go).
	// Every write after a claim applies only while the row is still that
	// claim: its fence (fenceSQL). A sent outcome also applies to a row a
	// rescue made unknown under the same claim (the wamid is the truth);
	// a retry, failure or unknown leaves such a row as the operator sees it.
	// One row's outcome moves as recordsql builds them for both drivers.
	recordSentTallySQL = `UPDATE messages SET ` + toSQL(campaign.MoveRecordSent) + `, wamid = v.column2, sent_at = v.column3,
		updated_at = v.column3, error_code = NULL, error_message = NULL, tally = 1 - tally
		FROM (VALUES %s) AS v
		WHERE messages.id = v.column1 AND ` + "messages.state = " + quote(campaign.Sending) + ` AND messages.account_id = v.column4
		AND ` + fenceSQL("messages.attempts", "v.column5")
	// startSQL marks a claim's request started on its attempt (the row is
	// read, not written) while it is open and unmarked and its row that claim.
	startSQL = `UPDATE attempts SET started = 1 WHERE id = ?1 AND message_id = ?2 AND done_at IS NULL AND started = 0
		AND EXISTS (SELECT 1 FROM messages WHERE messages.id = ?2 AND ` + stateIn("messages.state", []campaign.State{campaign.Sending}) +
		` AND ` + fenceSQL("messages.attempts", "?3") + `)`
	skipElsewhereSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSkipElsewhere) + `, updated_at = ?, error_code = ?,
		error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveSkipElsewhere, "state")
	expireSQL = `UPDATE messages SET ` + toSQL(campaign.MoveExpire) + `, updated_at = ?, error_message = ?
		WHERE campaign_id = ? AND ` + fromSQL(campaign.MoveExpire, "state")
	failNeverOpenSQL = `UPDATE messages SET ` + toSQL(campaign.MoveFailNeverOpen) + `, updated_at = ?, error_message = ?
		WHERE id = ? AND ` + fromSQL(campaign.MoveFailNeverOpen, "state")
	// The status webhooks' moves are inboxsql's.
)

// claimRows moves the claims' due pending rows to sending for runner, each
// through its account, in one statement. Their state was read in the same
// transaction, so every one must move; one that does not is a bug, not a
// race.
func claimRows(ctx context.Context, tx *Tx, runner string, now time.Time, cs []campaign.Claim) error {
	size := padded(len(cs))
	args := append(make([]any, 0, 3+3*size), runner, now.UnixNano(), now.Add(campaign.LeaseTerm).UnixNano())
	for _, c := range cs {
		args = append(args, c.Message.ID, c.Account.ID, c.QuotaEpoch)
	}
	for i := len(cs); i < size; i++ {
		args = append(args, 0, 0, 0) // no row has id 0
	}
	res, err := tx.ExecContext(ctx, claimsql.Repeated(claimSQL, size, "(?, ?, ?)"), args...)
	if err != nil {
		return fmt.Errorf("claim messages: %w", err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(cs)) {
		return fmt.Errorf("claim messages: %d of %d rows were pending (bug)", n, len(cs))
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
// attempts; args holds (id, wamid, at, account, fence) per row and attArgs
// (attempt id, at, class). It returns the rows their fence refused.
//
// When every row is still sending under its claim and every attempt is the
// claim's and has no answer yet — all but always — the statements keep the
// counts themselves (tally.go).
// Otherwise (a row declared unknown, claimed again, answered twice) record
// stores each, and the triggers count.
func recordSentMany(ctx context.Context, tx *Tx, rs []campaign.Result, size int, args, attArgs []any) ([]int64, error) {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT sent`); err != nil {
		return nil, err
	}
	rows := claimsql.Repeated(recordSentTallySQL, size, "(?, ?, ?, ?, ?)")
	attempts := claimsql.Repeated(`UPDATE attempts SET done_at = v.column2, outcome = 'sent', error_code = NULL, class = v.column3, tally = 1 - tally
		FROM (VALUES %s) AS v WHERE attempts.id = v.column1 AND attempts.outcome IS NULL AND attempts.class IS NULL
			AND attempts.account_id = v.column4 AND attempts.claimed_at = v.column5`, size, "(?, ?, ?, ?, ?)")
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
			return nil, err
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
			return nil, err
		}
		_, err := tx.ExecContext(ctx, `RELEASE sent`)
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO sent`); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `RELEASE sent`); err != nil {
		return nil, err
	}
	// One by one, as record stores any outcome: a rare path.
	var refused []int64
	for _, r := range rs {
		moved, err := record(ctx, tx, r.Claim, r.Outcome, r.At)
		if err != nil {
			return nil, err
		}
		if !moved {
			refused = append(refused, r.Claim.Message.ID)
		}
	}
	return refused, nil
}

// extendLeasesSQL extends the leases of a runner's rows in flight (a
// heartbeat) that no rescuer ended, even run out: until a rescuer takes a
// row, its holder may keep it. endLeasesSQL ends those of runners no
// longer registered (known dead) in a campaign (0: every campaign).
var (
	extendLeasesSQL = `UPDATE messages SET lease_until = ?1 WHERE runner_id = ?2 AND state = ` + quote(campaign.Sending) + ` AND lease_until > 0 AND lease_until <= ?3`
	endLeasesSQL    = `UPDATE messages SET lease_until = 0 WHERE state = ` + quote(campaign.Sending) + ` AND lease_until > 0
		AND (runner_id IS NULL OR runner_id NOT IN (SELECT id FROM runners)) AND (?1 = 0 OR campaign_id = ?1)`
)

// lapsedNote is what a row put back by the end of its lease says.
const lapsedNote = "not sent: its runner's lease ran out before the request started"

// expireLeases ends the leases run out by now (campaignID 0: of every
// campaign) as each rule of campaign.LeaseExpiry says: the daily quota and
// the contact-log entries of rows never sent given back, the rows'
// attempts closed (a put-back's or an unknown's), the rows moved, and
// under shared limits the gates' charges of the rows never sent queued to
// be given back (claimsql.QueueLapseRefunds). The rows made unknown are
// counted by campaign in perCampaign.
func expireLeases(ctx context.Context, tx *Tx, campaignID int64, now time.Time, perCampaign map[int64]int) error {
	for _, r := range campaign.LeaseExpiry {
		expired := fromSQL(r.Move, "messages.state") + ` AND messages.lease_until <= ?1 AND (?2 = 0 OR messages.campaign_id = ?2) AND ` +
			statesql.Started("messages", r.Started)
		note, outcome, class := lapsedNote, "retry", "not-sent"
		if r.Started {
			note, outcome, class = orphanedNote, "unknown", ""
		}
		if !r.Started { // nothing reached the API: the claims' sends are taken back (before their attempts close)
			if _, err := tx.ExecContext(ctx, `UPDATE accounts SET used_today = max(used_today - v.n, 0)
				FROM (SELECT account_id, quota_epoch, count(*) AS n FROM messages WHERE `+expired+` GROUP BY 1, 2) AS v
				WHERE accounts.id = v.account_id AND accounts.quota_epoch = v.quota_epoch`, now.UnixNano(), campaignID); err != nil {
				return fmt.Errorf("refund the quota of lapsed claims: %w", err)
			}
			if _, err := tx.ExecContext(ctx, statesql.Unlog(expired), now.UnixNano(), campaignID); err != nil {
				return fmt.Errorf("take back the sends of lapsed claims: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE attempts SET done_at = ?1, outcome = ?3, class = nullif(?4, '')
			FROM messages WHERE attempts.message_id = messages.id AND attempts.done_at IS NULL AND `+expired,
			now.UnixNano(), campaignID, outcome, class); err != nil {
			return fmt.Errorf("close the attempts of expired leases: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `UPDATE messages SET `+toSQL(r.Move)+`, updated_at = ?1, error_message = ?3, lease_until = 0
			WHERE `+expired+` RETURNING campaign_id, id, attempts, coalesce(account_id, 0)`, now.UnixNano(), campaignID, note)
		if err != nil {
			return fmt.Errorf("end expired leases (%s): %w", r.Move, err)
		}
		var lapsed []claimsql.Lapsed
		for rows.Next() {
			var c int64
			var l claimsql.Lapsed
			if err := rows.Scan(&c, &l.MessageID, &l.Attempt, &l.AccountID); err != nil {
				rows.Close()
				return fmt.Errorf("end expired leases: %w", err)
			}
			if r.Started {
				perCampaign[c]++
			} else {
				lapsed = append(lapsed, l)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("end expired leases: %w", err)
		}
		if err := claimsql.New(sqlTx{tx}, sqlite).QueueLapseRefunds(ctx, lapsed, now); err != nil {
			return err
		}
	}
	return nil
}

// The campaign-state moves that other paths take here, as managesql
// writes them for both drivers.

// pauseCampaign pauses a running campaign for reason.
func pauseCampaign(ctx context.Context, tx *Tx, id int64, reason string) error {
	return managesql.PauseCampaign(ctx, manageTx{tx}, sqlite, id, reason)
}

// pauseNoAccount pauses a campaign that has no usable account left.
func pauseNoAccount(ctx context.Context, tx *Tx, id int64) error {
	return managesql.PauseNoAccount(ctx, manageTx{tx}, sqlite, id)
}

// finishCampaign ends a campaign with no open row.
func finishCampaign(ctx context.Context, tx *Tx, id int64, now time.Time) error {
	return managesql.FinishCampaign(ctx, manageTx{tx}, sqlite, id, now)
}

// reopenCampaign runs a finished campaign again.
func reopenCampaign(ctx context.Context, tx *Tx, id int64) error {
	return managesql.ReopenCampaign(ctx, manageTx{tx}, sqlite, id)
}
