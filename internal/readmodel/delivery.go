package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// DeliveryFigures are what status webhooks said of a campaign's (or an
// account's) sent messages. They are read from counts kept as rows move
// (delivery_counts, message_counts), never from the messages themselves.
type DeliveryFigures struct {
	Sent int // accepted and not sent again since: state sent, or failed after send; held ones not
	// Held counts accepted rows Meta holds for quality assessment until a
	// status settles them (campaign.DeliveryHeld); MaxHeld is the
	// campaign's --max-held (campaigns only).
	Held, MaxHeld   int
	Delivered       int // delivered or read
	Read            int
	FailedAfterSend int // failed by a status webhook
	// Reported counts rows a status webhook gave a delivery state.
	Reported int
	// Replied counts rows their recipient answered (inbound messages
	// within the reply window, or pinned by context.id); OptedOut those
	// whose recipient opted out by answering. From reply_counts.
	Replied, OptedOut int
}

// ReplyRate is replied over sent.
func (f DeliveryFigures) ReplyRate() float64 { return ratio(f.Replied, f.Sent) }

// DeliveredRate is delivered over sent.
func (f DeliveryFigures) DeliveredRate() float64 { return ratio(f.Delivered, f.Sent) }

// ReadRate is read over delivered.
func (f DeliveryFigures) ReadRate() float64 { return ratio(f.Read, f.Delivered) }

// AnyReport says whether a webhook said anything of these messages: a
// delivery state, a failure after send or a reply. Until one did, the
// figures are not shown (show --json has no delivery object).
func (f DeliveryFigures) AnyReport() bool {
	return f.Reported != 0 || f.FailedAfterSend != 0 || f.Replied != 0 || f.Held != 0
}

// HeldStop says whether the campaign stops adding sends for its held ones
// (campaign.HeldStop).
func (f DeliveryFigures) HeldStop() bool {
	return campaign.HeldStop(f.Held, f.MaxHeld, time.Time{}) != nil
}

// CampaignDelivery reads a campaign's delivery figures.
func (r *Reader) CampaignDelivery(ctx context.Context, id int64) (DeliveryFigures, error) {
	var f DeliveryFigures
	err := r.db.QueryRowContext(ctx, `SELECT coalesce(sum(reported), 0), coalesce(sum(delivered), 0),
		coalesce(sum(read), 0), coalesce(sum(failed_after_send), 0), coalesce(sum(held), 0),
		(SELECT max_held FROM campaigns WHERE id = ?1),
		(SELECT coalesce(sum(n), 0) FROM message_counts WHERE campaign_id = ?1 AND state = 'sent'),
		(SELECT coalesce(sum(replied), 0) FROM reply_counts WHERE campaign_id = ?1),
		(SELECT coalesce(sum(opted_out), 0) FROM reply_counts WHERE campaign_id = ?1)
		FROM delivery_counts WHERE campaign_id = ?1`, id).
		Scan(&f.Reported, &f.Delivered, &f.Read, &f.FailedAfterSend, &f.Held, &f.MaxHeld, &f.Sent, &f.Replied, &f.OptedOut)
	if err != nil {
		return f, fmt.Errorf("campaign %d delivery: %w", id, err)
	}
	f.Sent += f.FailedAfterSend - f.Held
	return f, nil
}

// AccountDelivery reads delivery figures by account name, over one
// campaign or over all when campaignID is 0. Accounts no webhook reported
// on are left out.
func (r *Reader) AccountDelivery(ctx context.Context, campaignID int64) (map[string]DeliveryFigures, error) {
	rows, err := r.db.QueryContext(ctx, `WITH d AS (SELECT account_id, sum(reported) AS reported, sum(delivered) AS delivered,
			sum(read) AS read, sum(failed_after_send) AS failed, sum(held) AS held FROM delivery_counts
			WHERE (CAST(?1 AS BIGINT) = 0 OR campaign_id = ?1) GROUP BY account_id),
		sent AS (SELECT account_id, sum(n) AS n FROM message_counts
			WHERE state = 'sent' AND (CAST(?1 AS BIGINT) = 0 OR campaign_id = ?1) GROUP BY account_id),
		r AS (SELECT account_id, sum(replied) AS replied, sum(opted_out) AS opted_out FROM reply_counts
			WHERE (CAST(?1 AS BIGINT) = 0 OR campaign_id = ?1) GROUP BY account_id)
		SELECT a.name, d.reported, d.delivered, d.read, d.failed, d.held, coalesce(sent.n, 0), coalesce(r.replied, 0), coalesce(r.opted_out, 0)
		FROM d JOIN accounts a ON a.id = d.account_id LEFT JOIN sent ON sent.account_id = d.account_id
		LEFT JOIN r ON r.account_id = d.account_id
		WHERE d.reported <> 0 OR d.failed <> 0 OR d.held <> 0`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("delivery by account: %w", err)
	}
	defer rows.Close()
	out := map[string]DeliveryFigures{}
	for rows.Next() {
		var (
			name string
			f    DeliveryFigures
		)
		if err := rows.Scan(&name, &f.Reported, &f.Delivered, &f.Read, &f.FailedAfterSend, &f.Held, &f.Sent, &f.Replied, &f.OptedOut); err != nil {
			return nil, err
		}
		f.Sent += f.FailedAfterSend - f.Held
		out[name] = f
	}
	return out, rows.Err()
}

// StaleUnknown counts a campaign's unknown rows that no status webhook has
// settled for longer than grace since they were last touched: most likely
// never accepted.
func (r *Reader) StaleUnknown(ctx context.Context, id int64, grace time.Duration) (int, error) {
	var n int
	err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM messages
		WHERE campaign_id = ? AND state = 'unknown' AND coalesce(updated_at, 0) <= ?`,
		id, r.now().Add(-grace).UnixNano()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("campaign %d unknown rows: %w", id, err)
	}
	return n, nil
}
