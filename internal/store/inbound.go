package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Inbound messages: what people sent to the business numbers. The webhook
// package decides what one means (opt-out, opt-in, an answer) and which
// message of ours it replies to; the store keeps the message, links it to
// that message, counts the reply on its row and suppresses an opt-out's
// number. Under --limits the suppression reaches the other hosts through
// the outbox every suppression goes in (suppression_push, migration 0021).

// The inbox's rows, as campaign defines them for every store.
type (
	RepliedRow = campaign.RepliedRow
	SentRow    = campaign.SentRow
)

func (tx inboxTx) KeepInbound(ctx context.Context, m campaign.InboundRow) (bool, error) {
	account := sql.NullInt64{Int64: m.AccountID, Valid: m.AccountID != 0}
	res, err := tx.ExecContext(ctx, `INSERT INTO inbound_messages (id, phone, at, received_at, phone_number_id, account_id,
		type, text, payload, context_id, name, kind, reason, message_id, unknown, raw, link_wait)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		m.ID, m.Phone, nanos(m.At), m.ReceivedAt.UnixNano(), m.PhoneNumberID, account, m.Type, m.Text, m.Payload, m.ContextID, m.Name,
		string(m.Kind), m.Reason, nullID(m.Replies), m.Unknown, m.Raw, m.Wait)
	if err != nil {
		return false, fmt.Errorf("keep inbound message %s: %w", m.ID, err)
	}
	k, _ := res.RowsAffected()
	return k > 0, nil
}

func nullID(r campaign.RepliedRow) sql.NullInt64 { return sql.NullInt64{Int64: r.ID, Valid: r.ID != 0} }

func (tx inboxTx) SentTo(ctx context.Context, phone string) ([]campaign.SentRow, error) {
	// attempts > 0 is messages_phone_sent's term, so that it is used.
	rows, err := tx.QueryContext(ctx, `SELECT id, campaign_id, coalesce(account_id, 0), state = 'sending', coalesce(sent_at, 0)
		FROM messages WHERE phone = ? AND attempts > 0 AND state IN ('sending', 'sent')`, phone)
	out, err := rowscan.All(rows, err, func(rows *sql.Rows, r *campaign.SentRow) error {
		var sent int64
		err := rows.Scan(&r.ID, &r.CampaignID, &r.AccountID, &r.InFlight, &sent)
		r.SentAt = fromNanos(sent)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	return out, nil
}

// WaitingInbound are the answers that came while a message to their phone
// was in flight, oldest first.
func (tx inboxTx) WaitingInbound(ctx context.Context, max int) ([]campaign.InboundRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, phone, at, context_id, text, kind FROM inbound_messages
		WHERE link_wait = 1 ORDER BY at LIMIT ?`, max)
	ws, err := rowscan.All(rows, err, func(rows *sql.Rows, w *campaign.InboundRow) error {
		var at int64
		err := rows.Scan(&w.ID, &w.Phone, &at, &w.ContextID, &w.Text, &w.Kind)
		w.At = fromNanos(at)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read inbound messages waiting for their send: %w", err)
	}
	return ws, nil
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
const inboundPrefix = rowscan.InboundPrefix

// InboundSettings returns the inbound settings set (key → value, as
// `wasend config set` stored them); a key not set is absent.
func (s *Store) InboundSettings(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM settings WHERE key >= ? AND key < ?`, inboundPrefix, "inbound/")
	if err != nil {
		return nil, fmt.Errorf("read inbound settings: %w", err)
	}
	defer rows.Close()
	return rowscan.InboundSettings(rows)
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
