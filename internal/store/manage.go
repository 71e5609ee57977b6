package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// The operator's moves on accounts and campaigns. Each is one transaction
// whose WHERE clause names the states it applies to, so a move that no
// longer applies (the campaign finished meanwhile) changes nothing and
// says why.

// numberFree reports ErrNumberTaken, naming the account, when another live
// account (not id) already sends from number.
func numberFree(ctx context.Context, tx *Tx, name, number string, id int64) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT name FROM accounts WHERE phone_number_id = ? AND id <> ? AND removed_at IS NULL
		ORDER BY id LIMIT 1`, number, id).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("look up phone number id %s: %w", number, err)
	}
	return fmt.Errorf("account %s: phone number id %s is %w by account %s (one number, one account: two would send at twice its rate)",
		name, number, driver.ErrNumberTaken, other)
}

// RemoveAccount removes the named account: it is no longer listed or used,
// and its name and number are free again. Its history — attempts, sent
// rows, quota resets — is kept under RemovedName. It is refused with
// ErrInUse while a live runner holds rows claimed through the account.
func (s *Store) RemoveAccount(ctx context.Context, name string) error {
	return s.write(ctx, func(tx *Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ? AND removed_at IS NULL`, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("account %q: %w", name, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read account %s: %w", name, err)
		}
		now := s.now()
		var (
			camp     sql.NullInt64
			inFlight int
		)
		if err := tx.QueryRowContext(ctx, `SELECT min(m.campaign_id), count(*) FROM messages m JOIN runners r ON r.id = m.runner_id
			WHERE m.state = 'sending' AND m.account_id = ? AND r.heartbeat_at >= ?`,
			id, now.Add(-driver.LiveRunner).UnixNano()).Scan(&camp, &inFlight); err != nil {
			return fmt.Errorf("look for messages in flight through %s: %w", name, err)
		}
		if inFlight > 0 {
			return fmt.Errorf("account %s: campaign %d has %d message(s) in flight through it: %w; pause the campaign (`wasend campaign pause %d`) or let it finish, then remove the account",
				name, camp.Int64, inFlight, driver.ErrInUse, camp.Int64)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET removed_at = ?, disabled = 1, name = ? WHERE id = ?`,
			now.UnixNano(), driver.RemovedName(name, id), id); err != nil {
			return fmt.Errorf("remove account %s: %w", name, err)
		}
		return nil
	})
}

// stopped returns campaign.ErrPaused or campaign.ErrCancelled when the
// campaign may not be sent now, nil when it may.
func stopped(ctx context.Context, q querier, id int64) error {
	st, err := campaignState(ctx, q, id)
	if err != nil {
		return err
	}
	return st.Stopped()
}

// CampaignStopped returns campaign.ErrPaused or campaign.ErrCancelled when
// the campaign was paused or cancelled — by the operator from another
// shell, or by another runner — and nil while it may be sent. Running
// engines ask it with every heartbeat.
func (s *Store) CampaignStopped(ctx context.Context, id int64) error {
	return stopped(ctx, s.db, id)
}

// refuseCancelled returns an error wrapping campaign.ErrCancelled when the
// campaign was cancelled: nothing may reopen it.
func refuseCancelled(ctx context.Context, tx *Tx, id int64) error {
	var cancelled sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT cancelled_at FROM campaigns WHERE id = ?`, id).Scan(&cancelled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return fmt.Errorf("read campaign %d: %w", id, err)
	case cancelled.Valid:
		return fmt.Errorf("campaign %d: %w on %s; a cancelled campaign is final", id, campaign.ErrCancelled,
			fromNanos(cancelled.Int64).UTC().Format(time.DateTime+" UTC"))
	}
	return nil
}

// campaignState reads a campaign's state as shown (cancelled included).
func campaignState(ctx context.Context, q querier, id int64) (campaign.CampaignState, error) {
	var (
		state     campaign.CampaignState
		cancelled bool
	)
	err := q.QueryRowContext(ctx, `SELECT state, cancelled_at IS NOT NULL FROM campaigns WHERE id = ?`, id).Scan(&state, &cancelled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("read campaign %d: %w", id, err)
	case cancelled:
		return campaign.CampaignCancelled, nil
	}
	return state, nil
}

// PauseCampaign pauses a running campaign: runners stop claiming within
// seconds, the requests already made finish and are recorded, and
// `wasend campaign resume` continues it. It returns the state the campaign
// was in; pausing a paused campaign changes nothing. A finished or
// cancelled campaign can't be paused (ErrFinal).
func (s *Store) PauseCampaign(ctx context.Context, id int64, reason string) (campaign.CampaignState, error) {
	var was campaign.CampaignState
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if was, err = campaignState(ctx, tx, id); err != nil {
			return err
		}
		if noop, err := campaign.OperatorPause(id, was); noop || err != nil {
			return err
		}
		return pauseCampaign(ctx, tx, id, reason)
	})
	return was, err
}

// CancelCampaign ends a running or paused campaign for good: its pending
// rows are never sent, its counts stay as they are, and it shows as
// cancelled. Rows already in flight finish and are recorded. It returns
// the state the campaign was in; cancelling a cancelled campaign changes
// nothing. A finished campaign can't be cancelled (ErrFinal).
func (s *Store) CancelCampaign(ctx context.Context, id int64) (campaign.CampaignState, error) {
	var was campaign.CampaignState
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if was, err = campaignState(ctx, tx, id); err != nil {
			return err
		}
		if noop, err := campaign.OperatorCancel(id, was); noop || err != nil {
			return err
		}
		return cancelCampaign(ctx, tx, id, s.now())
	})
	return was, err
}

// DeleteCampaign deletes a campaign with its rows, skipped lines and
// attempts. It is refused with ErrInUse while a live runner sends it. Whom
// it messaged is kept (deleted_sends, and the send log the portfolio's
// reach reads): later imports still skip those numbers for the same
// template within 24 h, and for --skip-contacted-within, as Meta still
// counts them.
func (s *Store) DeleteCampaign(ctx context.Context, id int64) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := campaignState(ctx, tx, id); err != nil {
			return err
		}
		var (
			runner string
			pid    int
			host   string
		)
		err := tx.QueryRowContext(ctx, `SELECT id, host, pid FROM runners WHERE campaign_id = ? AND heartbeat_at >= ?
			ORDER BY heartbeat_at DESC LIMIT 1`, id, s.now().Add(-driver.LiveRunner).UnixNano()).Scan(&runner, &host, &pid)
		switch {
		case err == nil:
			return fmt.Errorf("campaign %d is being sent by wasend process %d on %s: %w; pause or cancel it first (`wasend campaign pause %d`), then delete it once that run has stopped",
				id, pid, host, driver.ErrInUse, id)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("look for runners of campaign %d: %w", id, err)
		}
		// Whom it messaged outlives it: the latest send to each number, per
		// template (the WHERE true keeps SQLite from reading ON CONFLICT as
		// a join's ON).
		if _, err := tx.ExecContext(ctx, `INSERT INTO deleted_sends (phone, template, campaign_id, sent_at)
			SELECT m.phone, CASE c.kind WHEN 'template' THEN c.template ELSE '' END, c.id, max(m.sent_at)
			FROM messages m JOIN campaigns c ON c.id = m.campaign_id
			WHERE m.campaign_id = ? AND m.state = 'sent' AND m.sent_at IS NOT NULL GROUP BY m.phone
			ON CONFLICT (phone, template) DO UPDATE SET sent_at = excluded.sent_at, campaign_id = excluded.campaign_id
			WHERE excluded.sent_at > sent_at`, id); err != nil {
			return fmt.Errorf("delete campaign %d: keep whom it messaged: %w", id, err)
		}
		// Runners that went silent: their rows go with the campaign.
		if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE campaign_id = ?`, id); err != nil {
			return fmt.Errorf("delete campaign %d: %w", id, err)
		}
		// attempts, skipped and campaign_accounts go by ON DELETE CASCADE.
		if _, err := tx.ExecContext(ctx, `DELETE FROM campaigns WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete campaign %d: %w", id, err)
		}
		return nil
	})
}

// RenameCampaign gives a campaign a new name.
func (s *Store) RenameCampaign(ctx context.Context, id int64, name string) error {
	name = strings.TrimSpace(name)
	if err := campaign.ValidateName(name); err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE campaigns SET name = ? WHERE id = ?`, name, id)
		if err != nil {
			return fmt.Errorf("rename campaign %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
		}
		return nil
	})
}

// RequeueFailed moves failed rows back to pending with a fresh retry
// budget: those with one of codes, or all when codes is empty. It reopens
// the campaign and returns how many rows moved.
func (s *Store) RequeueFailed(ctx context.Context, id int64, codes []int) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if n, err = requeueFailed(ctx, tx, id, codes, s.now()); err != nil {
			return err
		}
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}

func reopen(ctx context.Context, tx *Tx, id, moved int64) error {
	if err := refuseCancelled(ctx, tx, id); err != nil {
		return err
	}
	if moved == 0 {
		return nil
	}
	return reopenCampaign(ctx, tx, id)
}

// ResumeCampaign unpauses a campaign and gives the accounts dropped from it
// another chance: the operator has fixed what stopped them. It returns the
// reason the campaign was paused, "" if it was not.
func (s *Store) ResumeCampaign(ctx context.Context, id int64) (string, error) {
	var reason string
	err := s.write(ctx, func(tx *Tx) error {
		var state campaign.CampaignState
		err := tx.QueryRowContext(ctx, `SELECT state, pause_reason FROM campaigns WHERE id = ?`, id).Scan(&state, &reason)
		if err == sql.ErrNoRows {
			return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read campaign %d: %w", id, err)
		}
		if err := refuseCancelled(ctx, tx, id); err != nil {
			return err
		}
		if state != campaign.CampaignPaused {
			reason = ""
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM campaign_accounts WHERE campaign_id = ?`, id); err != nil {
			return fmt.Errorf("restore accounts of campaign %d: %w", id, err)
		}
		return resumeCampaign(ctx, tx, id)
	})
	return reason, err
}

// RequeueUndelivered moves sent rows that no webhook reported delivered
// (or read) and that were sent before the given instant back to pending,
// with a fresh retry budget. Delivered and read rows are never requeued.
func (s *Store) RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, requeueUndeliveredSQL,
			s.now().UnixNano(), id, sentBefore.UnixNano())
		if err != nil {
			return fmt.Errorf("requeue undelivered rows: %w", err)
		}
		n, _ = res.RowsAffected()
		return reopen(ctx, tx, id, n)
	})
	return int(n), err
}
