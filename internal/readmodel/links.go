package readmodel

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The phone ↔ user id links webhooks taught the store (store/links.go),
// as screening reads them.

// CountLinks is how many user ids have a known phone (none: imports need no
// lookups).
func (r *Reader) CountLinks(ctx context.Context) (int, error) {
	var n int
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM recipient_links`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count recipient links: %w", err)
	}
	return n, nil
}

// LinkedIn returns, for each of ids (phone numbers or user ids) that has a
// link, the ids of the same person: a user id's phone, a phone's user ids.
func (r *Reader) LinkedIn(ctx context.Context, ids []string) (map[string][]string, error) {
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
			rows, err := r.db.QueryContext(ctx, `SELECT user_id, phone FROM recipient_links WHERE `+q.col+` IN (`+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+`)`, list[:n]...)
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

// LinkMark is a place in the order links were learned: when, then by
// user id.
type LinkMark struct {
	SeenAt int64
	UserID string
}

// LearnedLink is a link and when it was learned (or last changed).
type LearnedLink struct {
	campaign.IdentityLink
	SeenAt time.Time
}

// LinksLearnedAfter returns up to limit links learned (or changed) after
// mark, in that order, and the mark of the last: what a host pushes to
// the links several hosts share (recipient_links_seen, migration 0048).
func (r *Reader) LinksLearnedAfter(ctx context.Context, mark LinkMark, limit int) ([]LearnedLink, LinkMark, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT user_id, phone, seen_at FROM recipient_links WHERE (seen_at, user_id) > (?, ?)
		ORDER BY seen_at, user_id LIMIT ?`, mark.SeenAt, mark.UserID, limit)
	if err != nil {
		return nil, mark, fmt.Errorf("read recipient links learned: %w", err)
	}
	defer rows.Close()
	var out []LearnedLink
	for rows.Next() {
		var l LearnedLink
		if err := rows.Scan(&l.UserID, &l.Phone, &mark.SeenAt); err != nil {
			return nil, mark, fmt.Errorf("read recipient links learned: %w", err)
		}
		mark.UserID, l.SeenAt = l.UserID, fromNanos(mark.SeenAt)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, mark, fmt.Errorf("read recipient links learned: %w", err)
	}
	return out, mark, nil
}
