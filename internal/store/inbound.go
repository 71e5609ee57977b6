package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Inbound messages: what people sent to the business numbers. The webhook
// rules say what one means (opt-out, opt-in, an answer) and how long after
// our message an answer is a reply; the store keeps the message, links it
// to the message of ours it replies to, counts the reply on its row and
// suppresses an opt-out's number. Under --limits the suppression reaches
// the other hosts through the outbox every suppression goes in
// (suppression_push, migration 0021).

// replyClockSlack lets an answer whose webhook time (whole seconds, Meta's
// clock) is a little before our send's (this host's clock) still reply to
// it.
const replyClockSlack = time.Minute

// keepInbound stores one inbound message once and applies what it means.
func keepInbound(ctx context.Context, tx *Tx, m campaign.InboundMessage, rules WebhookRules, now time.Time, rep *campaign.ApplyReport) error {
	rep.Inbound++
	if m.Unknown {
		rep.InboundUnknown++
	}
	mean := rules.Inbound(m)
	phone, err := inboundSender(ctx, tx, m)
	if err != nil {
		return err
	}
	id := m.WAMID
	if id == "" {
		sum := sha256.Sum256([]byte(m.Raw))
		id = "raw:" + hex.EncodeToString(sum[:16])
	}
	at := m.At
	if at.IsZero() {
		at = now
	}
	var account sql.NullInt64
	if m.PhoneNumberID != "" {
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE phone_number_id = ? ORDER BY id LIMIT 1`, m.PhoneNumberID).Scan(&account)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("look up number %s: %w", m.PhoneNumberID, err)
		}
	}
	var (
		r    repliedRow
		wait bool
	)
	if mean.Answers && phone != "" && !m.Unknown {
		var err error
		if r, wait, err = repliesTo(ctx, tx, phone, m.ContextID, at, rules.ReplyWindow()); err != nil {
			return err
		}
	}
	raw := ""
	if m.Unknown {
		raw = m.Raw
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO inbound_messages (id, phone, at, received_at, phone_number_id, account_id,
		type, text, payload, context_id, name, kind, reason, message_id, unknown, raw, link_wait)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, phone, nanos(at), now.UnixNano(), m.PhoneNumberID, account, m.Type, m.Text, m.Payload, m.ContextID, m.Name,
		string(mean.Kind), mean.Reason, r.nullID(), m.Unknown, raw, wait)
	if err != nil {
		return fmt.Errorf("keep inbound message %s: %w", id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return nil // kept before: a retried body
	}
	switch mean.Kind {
	case campaign.InboundOptOut:
		if campaign.CheckListable(phone) != nil {
			rep.Skips = append(rep.Skips, fmt.Sprintf("opt-out of %q not suppressed: not a phone number or a user id", m.From))
			break
		}
		rep.OptOuts++
		// Listed from when the person said so, which opt-ins are
		// compared with.
		if err := suppressOptOut(ctx, tx, phone, mean.Reason, minTime(at, now)); err != nil {
			return err
		}
	case campaign.InboundOptIn:
		rep.OptIns++ // listed (suppress list), never acted on
	}
	return linkReply(ctx, tx, r, at, m.Text, mean.Kind, rep)
}

// linkReply notes an answer on the row it replies to (none: id 0).
func linkReply(ctx context.Context, tx *Tx, r repliedRow, at time.Time, text string, kind campaign.InboundKind, rep *campaign.ApplyReport) error {
	if r.id == 0 {
		return nil
	}
	if err := noteReply(ctx, tx, r, at, text, rep); err != nil {
		return err
	}
	if kind == campaign.InboundOptOut {
		return noteOptOut(ctx, tx, r, at)
	}
	return nil
}

// repliedRow is the message of ours an answer replies to (id 0: none).
type repliedRow struct {
	id, campaignID, accountID int64
}

func (r repliedRow) nullID() sql.NullInt64 { return sql.NullInt64{Int64: r.id, Valid: r.id != 0} }

// repliesTo finds the message an answer from phone at time at replies to:
// the one context.id names, if it was sent to phone, at any age; else the
// latest sent to phone within window before at. wait: none yet, but a
// message to phone is in flight (its send not recorded): the answer may
// be to it, and is linked at a later drain (linkWaitingInbound).
func repliesTo(ctx context.Context, tx *Tx, phone, contextID string, at time.Time, window time.Duration) (r repliedRow, wait bool, err error) {
	if contextID != "" {
		// The message it names, whatever became of it since (messages_wamid).
		err := tx.QueryRowContext(ctx, `SELECT id, campaign_id, coalesce(account_id, 0) FROM messages
			WHERE wamid = ? AND phone = ? LIMIT 1`, contextID, phone).Scan(&r.id, &r.campaignID, &r.accountID)
		if err == nil {
			return r, false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return r, false, fmt.Errorf("find the message %s answers: %w", phone, err)
		}
	}
	// The state terms are messages_phone_sent's, so that it is used.
	rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, coalesce(account_id, 0), state, coalesce(sent_at, 0)
		FROM messages WHERE phone = ? AND state IN ('sending', 'sent')`, phone)
	if err != nil {
		return r, false, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	defer rows.Close()
	var latest int64
	from, to := at.Add(-window).UnixNano(), at.Add(replyClockSlack).UnixNano()
	for rows.Next() {
		var (
			c     repliedRow
			state string
			sent  int64
		)
		if err := rows.Scan(&c.id, &c.campaignID, &c.accountID, &state, &sent); err != nil {
			return r, false, fmt.Errorf("find the message %s answers: %w", phone, err)
		}
		switch {
		case state == string(campaign.Sending):
			wait = true
		case state == string(campaign.Sent) && sent >= from && sent <= to && sent > latest:
			r, latest = c, sent
		}
	}
	if err := rows.Err(); err != nil {
		return r, false, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	if wait {
		return repliedRow{}, true, nil
	}
	return r, false, nil
}

// linkWaitingInbound links the answers that came while a message to their
// phone was in flight, now that sends were recorded; an answer still
// finding one in flight waits on, until its reply window has passed.
func linkWaitingInbound(ctx context.Context, tx *Tx, rules WebhookRules, now time.Time, max int, rep *campaign.ApplyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, phone, at, context_id, text, kind FROM inbound_messages
		WHERE link_wait = 1 ORDER BY at LIMIT ?`, max)
	if err != nil {
		return fmt.Errorf("read inbound messages waiting for their send: %w", err)
	}
	type waiting struct {
		id, phone, contextID, text string
		at                         time.Time
		kind                       campaign.InboundKind
	}
	var ws []waiting
	for rows.Next() {
		var (
			w  waiting
			at int64
		)
		if err := rows.Scan(&w.id, &w.phone, &at, &w.contextID, &w.text, &w.kind); err != nil {
			rows.Close()
			return fmt.Errorf("read inbound messages waiting for their send: %w", err)
		}
		w.at = fromNanos(at)
		ws = append(ws, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read inbound messages waiting for their send: %w", err)
	}
	window := rules.ReplyWindow()
	for _, w := range ws {
		r, wait, err := repliesTo(ctx, tx, w.phone, w.contextID, w.at, window)
		if err != nil {
			return err
		}
		if wait && now.Sub(w.at) < window {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE inbound_messages SET link_wait = 0, message_id = ? WHERE id = ?`, r.nullID(), w.id); err != nil {
			return fmt.Errorf("link inbound message %s: %w", w.id, err)
		}
		if err := linkReply(ctx, tx, r, w.at, w.text, w.kind, rep); err != nil {
			return err
		}
	}
	return nil
}

// noteReply records a row's first reply (the earliest, whatever order the
// webhooks came in) and counts the row as replied once.
func noteReply(ctx context.Context, tx *Tx, r repliedRow, at time.Time, text string, rep *campaign.ApplyReport) error {
	res, err := tx.ExecContext(ctx, `UPDATE messages SET first_reply_at = ?, first_reply_text = ? WHERE id = ? AND first_reply_at IS NULL`,
		nanos(at), text, r.id)
	if err != nil {
		return fmt.Errorf("note the reply to message %d: %w", r.id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		_, err := tx.ExecContext(ctx, `UPDATE messages SET first_reply_at = ?, first_reply_text = ? WHERE id = ? AND first_reply_at > ?`,
			nanos(at), text, r.id, nanos(at))
		if err != nil {
			return fmt.Errorf("note the reply to message %d: %w", r.id, err)
		}
		return nil
	}
	rep.Replies++
	return countReply(ctx, tx, r, "replied")
}

// noteOptOut marks a row whose recipient opted out by answering it, once.
func noteOptOut(ctx context.Context, tx *Tx, r repliedRow, at time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE messages SET opted_out_at = ? WHERE id = ? AND opted_out_at IS NULL`, nanos(at), r.id)
	if err != nil {
		return fmt.Errorf("note the opt-out of message %d: %w", r.id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return nil
	}
	return countReply(ctx, tx, r, "opted_out")
}

func countReply(ctx context.Context, tx *Tx, r repliedRow, column string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO reply_counts (campaign_id, account_id, `+column+`) VALUES (?, ?, 1)
		ON CONFLICT (campaign_id, account_id) DO UPDATE SET `+column+` = `+column+` + 1`, r.campaignID, r.accountID)
	if err != nil {
		return fmt.Errorf("count the reply to message %d: %w", r.id, err)
	}
	return nil
}

// PruneInbound deletes the inbound messages older than before (their
// webhook time) and returns how many. The first reply kept on a row stays.
func (s *Store) PruneInbound(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM inbound_messages WHERE at < ?`, nanos(before))
		if err != nil {
			return fmt.Errorf("prune inbound messages: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// inboundPrefix keeps the inbound settings apart from the store's own in
// the settings table.
const inboundPrefix = "inbound."

// InboundSettings returns the inbound settings set (key → value, as
// `wasend config set` stored them); a key not set is absent.
func (s *Store) InboundSettings(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM settings WHERE key >= ? AND key < ?`, inboundPrefix, "inbound/")
	if err != nil {
		return nil, fmt.Errorf("read inbound settings: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("read inbound settings: %w", err)
		}
		out[strings.TrimPrefix(k, inboundPrefix)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read inbound settings: %w", err)
	}
	return out, nil
}

// SetInboundSetting stores an inbound setting's value, already checked by
// its parser; unset (true) goes back to the default.
func (s *Store) SetInboundSetting(ctx context.Context, key, value string, unset bool) error {
	return s.write(ctx, func(tx *Tx) error {
		var err error
		if unset {
			_, err = tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, inboundPrefix+key)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, inboundPrefix+key, value)
		}
		if err != nil {
			return fmt.Errorf("set %s: %w", key, err)
		}
		return nil
	})
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
