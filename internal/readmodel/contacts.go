package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The recent sends screening reads (--skip-contacted-within, the same
// template's repeat guard): what the messages table and the sends of
// deleted campaigns say.

// ContactedWithin returns every number sent a message within d of the
// store's clock, with the latest such send. It reads the messages table
// once, and what deleted campaigns sent.
func (r *Reader) ContactedWithin(ctx context.Context, d time.Duration) (map[string]campaign.Contact, error) {
	since := r.now().Add(-d)
	out := map[string]campaign.Contact{}
	// Each send, the latest kept per number here: the campaign beside a
	// max() is a bare column SQLite alone allows.
	if err := r.keepLatest(ctx, `SELECT phone, campaign_id, sent_at FROM messages
		WHERE state = 'sent' AND sent_at >= ?`, []any{nanos(since)}, out); err != nil {
		return nil, fmt.Errorf("find recent contacts: %w", err)
	}
	return out, r.deletedSends(ctx, `sent_at >= ?`, []any{nanos(since)}, out)
}

// SentTemplateWithin returns every number a campaign sent template to
// within d of the store's clock, with the latest such send. It reads only
// the campaigns of that template that may have sent within d and have
// sent something (message_counts): a campaign's sent rows are found
// through its whole messages_campaign range, so an imported, unsent list
// of a million rows cost every check and import of its template a scan of
// them, ~0.25 s and the reader's 16 MiB page cache. Then what deleted
// campaigns sent.
func (r *Reader) SentTemplateWithin(ctx context.Context, template string, d time.Duration) (map[string]campaign.Contact, error) {
	since := nanos(r.now().Add(-d))
	rows, err := r.db.QueryContext(ctx, `SELECT id FROM campaigns WHERE kind = 'template' AND template = ?
		AND (finished_at IS NULL OR finished_at >= ?)
		AND EXISTS (SELECT 1 FROM message_counts WHERE campaign_id = campaigns.id AND state = 'sent' AND n > 0)`, template, since)
	if err != nil {
		return nil, fmt.Errorf("find campaigns of template %s: %w", template, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string]campaign.Contact{}
	for _, id := range ids {
		rows, err := r.db.QueryContext(ctx, `SELECT phone, max(sent_at) FROM messages
			WHERE campaign_id = ? AND state = 'sent' AND sent_at >= ? GROUP BY phone`, id, since)
		if err != nil {
			return nil, fmt.Errorf("find recent sends of template %s: %w", template, err)
		}
		for rows.Next() {
			var (
				phone string
				at    int64
			)
			if err := rows.Scan(&phone, &at); err != nil {
				rows.Close()
				return nil, err
			}
			if c, ok := out[phone]; !ok || c.At.Before(fromNanos(at)) {
				out[phone] = campaign.Contact{CampaignID: id, At: fromNanos(at)}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, r.deletedSends(ctx, `template = ? AND sent_at >= ?`, []any{template, since}, out)
}

// deletedSends adds to out the sends of deleted campaigns that match
// where, each unless out has a later one for its number.
func (r *Reader) deletedSends(ctx context.Context, where string, args []any, out map[string]campaign.Contact) error {
	if err := r.keepLatest(ctx, `SELECT phone, campaign_id, sent_at FROM deleted_sends WHERE `+where, args, out); err != nil {
		return fmt.Errorf("read the sends of deleted campaigns: %w", err)
	}
	return nil
}

// keepLatest adds to out each send query gives (phone, campaign, when),
// unless out has a later one for its number.
func (r *Reader) keepLatest(ctx context.Context, query string, args []any, out map[string]campaign.Contact) error {
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			phone string
			c     campaign.Contact
			at    int64
		)
		if err := rows.Scan(&phone, &c.CampaignID, &at); err != nil {
			return err
		}
		c.At = fromNanos(at)
		if prev, ok := out[phone]; !ok || prev.At.Before(c.At) {
			out[phone] = c
		}
	}
	return rows.Err()
}
