package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Links between phone numbers and business-scoped user ids (migration
// 0042): learned from webhooks, read by imports and by the inbound
// matching. A person is one person whichever of the two a row or a webhook
// names.

// LearnLinks keeps the phone ↔ user id pairs a webhook body showed; a
// changed pair replaces the old (seen_at: when it was first seen so).
func (tx inboxTx) LearnLinks(ctx context.Context, links []campaign.IdentityLink, now time.Time) error {
	for _, l := range links {
		if campaign.CheckListable(l.Phone) != nil || !campaign.IsBSUID(l.UserID) || campaign.IsBSUID(l.Phone) {
			continue // a link must pair a number with an id
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO recipient_links (user_id, phone, seen_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, seen_at = excluded.seen_at
			WHERE recipient_links.phone <> excluded.phone`, // every status repeats the pair: write it once
			l.UserID, l.Phone, now.UnixNano()); err != nil {
			return fmt.Errorf("link %s to %s: %w", l.UserID, l.Phone, err)
		}
	}
	return nil
}

// CountLinks is how many user ids have a known phone (none: imports need no
// lookups).
func (s *Store) CountLinks(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM recipient_links`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count recipient links: %w", err)
	}
	return n, nil
}

// LinkedIn returns, for each of ids (phone numbers or user ids) that has a
// link, the ids of the same person: a user id's phone, a phone's user ids.
func (s *Store) LinkedIn(ctx context.Context, ids []string) (map[string][]string, error) {
	var users, phones []any
	for _, id := range ids {
		if campaign.IsBSUID(id) {
			users = append(users, id)
		} else {
			phones = append(phones, id)
		}
	}
	var out map[string][]string
	// Each list by its own index: one statement with "user_id IN … OR
	// phone IN …" scans the table.
	for _, q := range []struct {
		col string
		ids []any
	}{{"user_id", users}, {"phone", phones}} {
		const chunk = 500 // SQLite's variables per statement stay well under its limit
		for list := q.ids; len(list) > 0; {
			n := min(len(list), chunk)
			rows, err := s.db.QueryContext(ctx, `SELECT user_id, phone FROM recipient_links WHERE `+q.col+` IN (`+placeholders(n)+`)`, list[:n]...)
			list = list[n:]
			if err != nil {
				return nil, fmt.Errorf("read recipient links: %w", err)
			}
			for rows.Next() {
				var user, phone string
				if err := rows.Scan(&user, &phone); err != nil {
					rows.Close()
					return nil, fmt.Errorf("read recipient links: %w", err)
				}
				if out == nil {
					out = map[string][]string{}
				}
				out[user] = appendNew(out[user], phone)
				out[phone] = appendNew(out[phone], user)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("read recipient links: %w", err)
			}
		}
	}
	return out, nil
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// InboundSender is the recipient key an inbound message is filed under:
// its sender's number; for a sender known only by a user id, the number
// linked to it, or else the id itself (the key of rows sent to it).
func (tx inboxTx) InboundSender(ctx context.Context, m campaign.InboundMessage) (string, error) {
	if m.From != "" {
		return "+" + strings.TrimPrefix(m.From, "+"), nil
	}
	if m.UserID == "" {
		return "", nil
	}
	var phone string
	err := tx.QueryRowContext(ctx, `SELECT phone FROM recipient_links WHERE user_id = ?`, m.UserID).Scan(&phone)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return m.UserID, nil
	case err != nil:
		return "", fmt.Errorf("find the number of %s: %w", m.UserID, err)
	}
	return phone, nil
}

// statusRecipientIs reports whether a status names the recipient of a row
// whose recipient is phone (a number or a user id): by recipient_id, or
// by recipient_user_id for a row sent to a user id. A status naming
// neither says nothing against it.
func statusRecipientIs(phone string, ev campaign.StatusEvent) bool {
	if ev.Recipient == "" && ev.RecipientUserID == "" {
		return true
	}
	if campaign.IsBSUID(phone) {
		return ev.RecipientUserID == phone || ev.Recipient == phone
	}
	return ev.Recipient == "" || strings.TrimPrefix(phone, "+") == strings.TrimPrefix(ev.Recipient, "+")
}
