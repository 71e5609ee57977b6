package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The operator's moves on campaigns and accounts, each one transaction whose
// statements name the states they apply to (moves_sql.go), as on SQLite
// (manage.go, results.go, delivery.go, dropped.go, outage.go there).

// campaignState reads a campaign's state as shown (cancelled included).
func campaignState(ctx context.Context, q querier, id int64) (campaign.CampaignState, error) {
	var (
		state     string
		cancelled bool
	)
	err := q.QueryRow(ctx, `SELECT state, cancelled_at IS NOT NULL FROM campaigns WHERE id = $1`, id).Scan(&state, &cancelled)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("read campaign %d: %w", id, err)
	case cancelled:
		return campaign.CampaignCancelled, nil
	}
	return campaign.CampaignState(state), nil
}

// refuseCancelled wraps campaign.ErrCancelled when the campaign was
// cancelled: nothing may reopen it.
func refuseCancelled(ctx context.Context, q querier, id int64) error {
	var cancelled *int64
	err := q.QueryRow(ctx, `SELECT cancelled_at FROM campaigns WHERE id = $1`, id).Scan(&cancelled)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return fmt.Errorf("read campaign %d: %w", id, err)
	case cancelled != nil:
		return fmt.Errorf("campaign %d: %w on %s; a cancelled campaign is final", id, campaign.ErrCancelled,
			fromNanos(*cancelled).UTC().Format(time.DateTime+" UTC"))
	}
	return nil
}

// lockCampaign locks a campaign's row for a move: two hosts moving one
// campaign go one after the other, each seeing the other's result.
func lockCampaign(ctx context.Context, tx pgx.Tx, id int64) error {
	if _, err := tx.Exec(ctx, `SELECT id FROM campaigns WHERE id = $1 FOR UPDATE`, id); err != nil {
		return fmt.Errorf("lock campaign %d: %w", id, err)
	}
	return nil
}

// PauseCampaign pauses a running campaign and returns the state it was in.
func (s *Store) PauseCampaign(ctx context.Context, id int64, reason string) (campaign.CampaignState, error) {
	var was campaign.CampaignState
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if was, err = campaignState(ctx, tx, id); err != nil {
			return err
		}
		if noop, err := campaign.OperatorPause(id, was); noop || err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pauseCampaignSQL, reason, id); err != nil {
			return fmt.Errorf("pause campaign %d: %w", id, err)
		}
		return nil
	})
	return was, err
}

// CancelCampaign ends a running or paused campaign for good and returns
// the state it was in.
func (s *Store) CancelCampaign(ctx context.Context, id int64) (campaign.CampaignState, error) {
	var was campaign.CampaignState
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if was, err = campaignState(ctx, tx, id); err != nil {
			return err
		}
		if noop, err := campaign.OperatorCancel(id, was); noop || err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, cancelCampaignSQL, s.now().UnixNano(), id); err != nil {
			return fmt.Errorf("cancel campaign %d: %w", id, err)
		}
		return nil
	})
	return was, err
}

// ResumeCampaign unpauses a campaign and takes back the accounts dropped
// from it; it returns the reason it was paused, "" if it was not.
func (s *Store) ResumeCampaign(ctx context.Context, id int64) (string, error) {
	var reason string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		var state string
		err := tx.QueryRow(ctx, `SELECT state, pause_reason FROM campaigns WHERE id = $1`, id).Scan(&state, &reason)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read campaign %d: %w", id, err)
		}
		if err := refuseCancelled(ctx, tx, id); err != nil {
			return err
		}
		if campaign.CampaignState(state) != campaign.CampaignPaused {
			reason = ""
		}
		if _, err := tx.Exec(ctx, `DELETE FROM campaign_accounts WHERE campaign_id = $1`, id); err != nil {
			return fmt.Errorf("restore accounts of campaign %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, resumeCampaignSQL, id); err != nil {
			return fmt.Errorf("resume campaign %d: %w", id, err)
		}
		return nil
	})
	return reason, err
}

// DeleteCampaign deletes a campaign with its rows, refused with
// driver.ErrInUse while a live runner sends it; whom it messaged is kept.
func (s *Store) DeleteCampaign(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		if _, err := campaignState(ctx, tx, id); err != nil {
			return err
		}
		var (
			runner, host string
			pid          int64
		)
		err := tx.QueryRow(ctx, `SELECT id, host, pid FROM runners WHERE campaign_id = $1 AND heartbeat_at >= $2
			ORDER BY heartbeat_at DESC LIMIT 1`, id, s.now().Add(-driver.LiveRunner).UnixNano()).Scan(&runner, &host, &pid)
		switch {
		case err == nil:
			return fmt.Errorf("campaign %d is being sent by wasend process %d on %s: %w; pause or cancel it first (`wasend campaign pause %d`), then delete it once that run has stopped",
				id, pid, host, driver.ErrInUse, id)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look for runners of campaign %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO deleted_sends (phone, template, campaign_id, sent_at)
			SELECT m.phone, CASE c.kind WHEN 'template' THEN c.template ELSE '' END, c.id, max(m.sent_at)
			FROM messages m JOIN campaigns c ON c.id = m.campaign_id
			WHERE m.campaign_id = $1 AND m.state = 'sent' AND m.sent_at IS NOT NULL GROUP BY m.phone, c.kind, c.template, c.id
			ON CONFLICT (phone, template) DO UPDATE SET sent_at = excluded.sent_at, campaign_id = excluded.campaign_id
			WHERE excluded.sent_at > deleted_sends.sent_at`, id); err != nil {
			return fmt.Errorf("delete campaign %d: keep whom it messaged: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM runners WHERE campaign_id = $1`, id); err != nil {
			return fmt.Errorf("delete campaign %d: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM campaigns WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete campaign %d: %w", id, err)
		}
		return nil
	})
}

// reopen refuses a cancelled campaign and runs a finished one again when
// rows moved back to pending.
func reopen(ctx context.Context, tx pgx.Tx, id, moved int64) error {
	if err := refuseCancelled(ctx, tx, id); err != nil {
		return err
	}
	if moved == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, reopenCampaignSQL, id); err != nil {
		return fmt.Errorf("reopen campaign %d: %w", id, err)
	}
	return nil
}

// RequeueFailed moves failed rows back to pending (those with one of codes,
// all when none) and reopens the campaign.
func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		q, args := requeueSQL(campaign.MoveRequeueFailed), []any{s.now().UnixNano(), id}
		if len(codes) > 0 {
			list := make([]int64, len(codes))
			for i, c := range codes {
				list[i] = int64(c)
			}
			q, args = q+` AND error_code = ANY($3)`, append(args, list)
		}
		tag, err := tx.Exec(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("requeue failed rows: %w", err)
		}
		n = tag.RowsAffected()
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}

// RequeueUnknown moves unknown rows back to pending and reopens the
// campaign.
func (s *Store) RequeueUnknown(ctx context.Context, id int64) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, requeueSQL(campaign.MoveRequeueUnknown), s.now().UnixNano(), id)
		if err != nil {
			return fmt.Errorf("requeue unknown rows: %w", err)
		}
		n = tag.RowsAffected()
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}

// RequeueUndelivered moves sent rows no webhook reported delivered, sent
// before sentBefore, back to pending.
func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockCampaign(ctx, tx, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, requeueUndeliveredSQL, s.now().UnixNano(), id, sentBefore.UnixNano())
		if err != nil {
			return fmt.Errorf("requeue undelivered rows: %w", err)
		}
		n = tag.RowsAffected()
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}

// DropAccount stops an account for one campaign; an account already
// dropped keeps its first reason.
func (s *Store) DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return dropAccount(ctx, tx, campaignID, accountID, reason, code, now) })
}

func dropAccount(ctx context.Context, tx pgx.Tx, campaignID, accountID int64, reason string, code int, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO campaign_accounts (campaign_id, account_id, reason, error_code, at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, campaignID, accountID, reason, code, now.UnixNano()); err != nil {
		return fmt.Errorf("drop account %d from campaign %d: %w", accountID, campaignID, err)
	}
	return nil
}

// ReadmitAccount takes an account back into a campaign if it was dropped
// with a reason starting with prefix.
func (s *Store) ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM campaign_accounts WHERE campaign_id = $1 AND account_id = $2
		AND left(reason, $3) = $4`, campaignID, accountID, len([]rune(prefix)), prefix)
	if err != nil {
		return false, fmt.Errorf("readmit account %d to campaign %d: %w", accountID, campaignID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// SetOutage records (or, with a zero Since, clears) the outage a running
// campaign waits out; with pause, the campaign pauses too.
func (s *Store) SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var since, probe *int64
		var text *string
		if !o.Since.IsZero() {
			a, b, e := nanos(o.Since), nanos(o.NextProbe), o.Error
			since, probe, text = &a, &b, &e
		}
		tag, err := tx.Exec(ctx, `UPDATE campaigns SET outage_since = $1, outage_error = $2, outage_probe_at = $3 WHERE id = $4`,
			since, text, probe, campaignID)
		if err != nil {
			return fmt.Errorf("note outage of campaign %d: %w", campaignID, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("campaign %d: %w", campaignID, campaign.ErrNotFound)
		}
		if pause != "" {
			if _, err := tx.Exec(ctx, pauseCampaignSQL, pause, campaignID); err != nil {
				return fmt.Errorf("pause campaign %d: %w", campaignID, err)
			}
		}
		return nil
	})
}

// RemoveAccount removes the named account, its history kept under
// driver.RemovedName; refused with driver.ErrInUse while a live runner holds
// rows claimed through it.
func (s *Store) RemoveAccount(ctx context.Context, name string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1 AND removed_at IS NULL FOR UPDATE`, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read account %s: %w", name, err)
		}
		now := s.now()
		var (
			camp     *int64
			inFlight int64
		)
		if err := tx.QueryRow(ctx, `SELECT min(m.campaign_id), count(*) FROM messages m JOIN runners r ON r.id = m.runner_id
			WHERE m.state = 'sending' AND m.account_id = $1 AND r.heartbeat_at >= $2`,
			id, now.Add(-driver.LiveRunner).UnixNano()).Scan(&camp, &inFlight); err != nil {
			return fmt.Errorf("look for messages in flight through %s: %w", name, err)
		}
		if inFlight > 0 {
			return fmt.Errorf("account %s: campaign %d has %d message(s) in flight through it: %w; pause the campaign (`wasend campaign pause %d`) or let it finish, then remove the account",
				name, *camp, inFlight, driver.ErrInUse, *camp)
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts SET removed_at = $1, disabled = 1, name = $2 WHERE id = $3`,
			now.UnixNano(), driver.RemovedName(name, id), id); err != nil {
			return fmt.Errorf("remove account %s: %w", name, err)
		}
		return nil
	})
}

// orphanedNote is what an orphaned row's error message says (SQLite's).
const orphanedNote = "interrupted: the request may have reached the API, so it is not resent automatically"

// RecoverOrphans ends the leases that ran out by now or whose runner is
// dead (or unregistered) as campaign.LeaseExpiry says: a row whose request
// never started goes back to pending, one whose request may have started
// becomes unknown (never pending). It returns the rows made unknown, by
// campaign.
func (s *Store) RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	return s.recoverOrphans(ctx, 0, now, dead)
}

// Rescue is RecoverOrphans for one campaign's rows, while its engine runs.
func (s *Store) Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error) {
	if campaignID <= 0 {
		return 0, fmt.Errorf("rescue: campaign id %d: %w", campaignID, campaign.ErrNotFound)
	}
	moved, err := s.recoverOrphans(ctx, campaignID, now, dead)
	return moved[campaignID], err
}

// rescueLock is the advisory lock of the rescuer: any live host may run
// it, one at a time; one that finds it taken leaves the work to the
// holder.
const rescueLock = 0x7761_7365_6e64_02 // "wasend" 2

// lapsedNote is what a row put back by the end of its lease says (SQLite's).
const lapsedNote = "not sent: its runner's lease ran out before the request started"

// recoverOrphans removes the runners dead says are gone, ends their
// leases, then ends every lease run out (campaignID 0: every campaign's).
// A row's lock orders it with a late outcome or start of its runner: the
// one that commits second sees what the first wrote (a row no longer
// sending under its fence refuses the outcome; a sent one is kept, the
// wamid is the truth).
func (s *Store) recoverOrphans(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error) {
	var moved map[int64]int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		moved = map[int64]int{}
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(rescueLock)).Scan(&mine); err != nil {
			return fmt.Errorf("take the rescuer's lock: %w", err)
		}
		if !mine {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT id, campaign_id, host, pid, pid_space, started_at, heartbeat_at FROM runners`)
		if err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		var gone []string
		for rows.Next() {
			var (
				r             campaign.Runner
				pid           int64
				started, beat int64
			)
			if err := rows.Scan(&r.ID, &r.CampaignID, &r.Host, &pid, &r.Space, &started, &beat); err != nil {
				rows.Close()
				return fmt.Errorf("list runners: %w", err)
			}
			r.PID, r.StartedAt, r.HeartbeatAt = int(pid), fromNanos(started), fromNanos(beat)
			if dead(r) {
				gone = append(gone, r.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list runners: %w", err)
		}
		if len(gone) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM runners WHERE id = ANY($1)`, gone); err != nil {
				return fmt.Errorf("remove dead runners: %w", err)
			}
		}
		// A runner known dead, or not registered, holds its leases no
		// longer: the faster path.
		if _, err := tx.Exec(ctx, endLeasesSQL, campaignID); err != nil {
			return fmt.Errorf("end the leases of dead runners: %w", err)
		}
		return expireLeases(ctx, tx, campaignID, now, moved)
	})
	return moved, err
}

// expireLeases ends the leases run out by now as campaign.LeaseExpiry
// says, gives back the daily quota and the contact-log entries of the rows
// put back and closes the rows' attempts; the rows made unknown are
// counted by campaign in perCampaign.
func expireLeases(ctx context.Context, tx pgx.Tx, campaignID int64, now time.Time, perCampaign map[int64]int) error {
	for _, r := range campaign.LeaseExpiry {
		note, outcome, class := lapsedNote, "retry", "not-sent"
		if r.Started {
			note, outcome, class = orphanedNote, "unknown", ""
		}
		rows, err := tx.Query(ctx, leaseExpirySQL(r), now.UnixNano(), note, now.UnixNano(), campaignID)
		if err != nil {
			return fmt.Errorf("end expired leases (%s): %w", r.Move, err)
		}
		var ids []int64
		refunds := map[[2]int64]int64{} // (account, quota epoch) → rows
		for rows.Next() {
			var id, c int64
			var acct, epoch *int64
			if err := rows.Scan(&id, &c, &acct, &epoch); err != nil {
				rows.Close()
				return fmt.Errorf("end expired leases: %w", err)
			}
			ids = append(ids, id)
			if r.Started {
				perCampaign[c]++
			} else if acct != nil && epoch != nil {
				refunds[[2]int64{*acct, *epoch}]++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("end expired leases: %w", err)
		}
		for k, n := range refunds {
			if _, err := tx.Exec(ctx, `UPDATE accounts SET used_today = greatest(used_today - $1, 0)
				WHERE id = $2 AND quota_epoch = $3`, n, k[0], k[1]); err != nil {
				return fmt.Errorf("refund quota of lapsed claims: %w", err)
			}
		}
		if len(ids) > 0 && !r.Started {
			if _, err := tx.Exec(ctx, statesql.Unlog(`messages.id = ANY($1)`), ids); err != nil {
				return fmt.Errorf("take back the sends of lapsed claims: %w", err)
			}
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE attempts SET done_at = $1, outcome = $2, class = nullif($3, '')
				WHERE done_at IS NULL AND message_id = ANY($4)`, now.UnixNano(), outcome, class, ids); err != nil {
				return fmt.Errorf("close attempts of expired leases: %w", err)
			}
		}
	}
	return nil
}
