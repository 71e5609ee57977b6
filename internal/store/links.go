package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Links between phone numbers and business-scoped user ids (migration
// 0042): learned from webhooks, read by imports and by the inbound
// matching. A person is one person whichever of the two a row or a webhook
// names.

// LearnLinks keeps the phone ↔ user id pairs a webhook body showed (or
// another host's, copied with its time); a changed pair replaces an older
// one (seen_at: when it was first seen so).
func (tx inboxTx) LearnLinks(ctx context.Context, links []campaign.IdentityLink, now time.Time) error {
	for _, l := range links {
		if !l.Pairs() {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO recipient_links (user_id, phone, seen_at) VALUES (?, ?, ?)
			ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, seen_at = excluded.seen_at
			WHERE recipient_links.phone <> excluded.phone AND recipient_links.seen_at <= excluded.seen_at`, // every status repeats the pair: write it once
			l.UserID, l.Phone, now.UnixNano()); err != nil {
			return fmt.Errorf("link %s to %s: %w", l.UserID, l.Phone, err)
		}
	}
	return nil
}
