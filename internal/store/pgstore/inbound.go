package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/statesql"
)

// Inbound messages on Postgres (SQLite's inbound.go and links.go): kept
// once, linked to the message they answer, counted on its row.

// nullID is id, or NULL for 0 (no row).
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func (tx inboxTx) KeepInbound(ctx context.Context, m campaign.InboundRow) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO inbound_messages (id, phone, at, received_at, phone_number_id, account_id,
		type, text, payload, context_id, name, kind, reason, message_id, unknown, raw, link_wait)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (id) DO NOTHING`,
		m.ID, m.Phone, nanos(m.At), m.ReceivedAt.UnixNano(), m.PhoneNumberID, nullID(m.AccountID), m.Type, m.Text, m.Payload,
		m.ContextID, m.Name, string(m.Kind), m.Reason, nullID(m.Replies.ID), boolInt(m.Unknown), m.Raw, boolInt(m.Wait))
	if err != nil {
		return false, fmt.Errorf("keep inbound message %s: %w", m.ID, err)
	}
	return tag.RowsAffected() > 0, nil
}

func (tx inboxTx) SentTo(ctx context.Context, phone string) ([]campaign.SentRow, error) {
	rows, err := tx.Query(ctx, `SELECT id, campaign_id, coalesce(account_id, 0), state = `+statesql.Quote(campaign.Sending)+`,
		coalesce(sent_at, 0) FROM messages WHERE phone = $1 AND attempts > 0 AND state IN ('sending', 'sent')`, phone) // messages_phone_sent's terms
	if err != nil {
		return nil, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (campaign.SentRow, error) {
		var (
			r    campaign.SentRow
			sent int64
		)
		err := row.Scan(&r.ID, &r.CampaignID, &r.AccountID, &r.InFlight, &sent)
		r.SentAt = fromNanos(sent)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	return out, nil
}

// WaitingInbound are the answers that came while a message to their phone
// was in flight, oldest first.
func (tx inboxTx) WaitingInbound(ctx context.Context, max int) ([]campaign.InboundRow, error) {
	rows, err := tx.Query(ctx, `SELECT id, phone, at, context_id, text, kind FROM inbound_messages
		WHERE link_wait = 1 ORDER BY at LIMIT $1`, max)
	if err != nil {
		return nil, fmt.Errorf("read inbound messages waiting for their send: %w", err)
	}
	ws, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (campaign.InboundRow, error) {
		var (
			w  campaign.InboundRow
			at int64
		)
		err := row.Scan(&w.ID, &w.Phone, &at, &w.ContextID, &w.Text, &w.Kind)
		w.At = fromNanos(at)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("read inbound messages waiting for their send: %w", err)
	}
	return ws, nil
}

// LearnLinks keeps the pairs a body showed, in one round trip: a changed
// pair replaces an older one, a pair seen again is not written.
func (tx inboxTx) LearnLinks(ctx context.Context, links []campaign.IdentityLink, now time.Time) error {
	b := &pgx.Batch{}
	for _, l := range links {
		if l.Pairs() {
			b.Queue(`INSERT INTO recipient_links (user_id, phone, seen_at) VALUES ($1, $2, $3)
				ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, seen_at = excluded.seen_at
				WHERE recipient_links.phone <> excluded.phone AND recipient_links.seen_at <= excluded.seen_at`,
				l.UserID, l.Phone, now.UnixNano())
		}
	}
	if err := send(ctx, tx.Tx, b); err != nil {
		return fmt.Errorf("learn recipient links: %w", err)
	}
	return nil
}

// PruneInbound deletes the inbound messages older than before (their
// webhook time) and returns how many. The first reply kept on a row stays.
func (s *Store) PruneInbound(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM inbound_messages WHERE at < $1`, nanos(before))
	if err != nil {
		return 0, fmt.Errorf("prune inbound messages: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
