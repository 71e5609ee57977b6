package readmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// segmentWhere is each segment's condition on a campaign's messages. A
// segment holds rows wasend made a request for: pending and in-flight rows
// may still be sent, so no segment takes them. not-delivered leaves out
// the rows wasend failed itself without a request (suppressed, another
// host's: negative codes).
var segmentWhere = map[campaign.SegmentKind]string{
	campaign.SegmentNotDelivered: `state IN ('sent', 'failed', 'unknown') AND delivered_at IS NULL AND read_at IS NULL
		AND coalesce(error_code, 0) >= 0`,
	campaign.SegmentDeliveredNotRead: `delivered_at IS NOT NULL AND read_at IS NULL`,
	campaign.SegmentRead:             `read_at IS NOT NULL`,
	campaign.SegmentReplied:          `first_reply_at IS NOT NULL`,
	campaign.SegmentNotReplied:       `state = 'sent' AND first_reply_at IS NULL`,
	campaign.SegmentFailed:           `state = 'failed' AND error_code = ?`,
}

// SegmentRows returns the rows of campaign id in segment seg, in line
// order, with the values they were sent with (parameters, header,
// buttons, body). It reads them once: a campaign made from them is a
// snapshot, and rows joining the segment later are not in it.
func (r *Reader) SegmentRows(ctx context.Context, id int64, seg campaign.Segment) ([]campaign.Message, error) {
	where, ok := segmentWhere[seg.Kind]
	if !ok {
		return nil, fmt.Errorf("segment %q: unknown", seg)
	}
	args := []any{id}
	if seg.Kind == campaign.SegmentFailed {
		args = append(args, seg.Code)
	}
	rows, err := r.db.QueryContext(ctx, `SELECT id, line, input, phone, params, body, extras, state, coalesce(account_id, 0)
		FROM messages WHERE campaign_id = ? AND `+where+` ORDER BY line, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read segment %s of campaign %d: %w", seg, id, err)
	}
	defer rows.Close()
	var out []campaign.Message
	for rows.Next() {
		var (
			m              campaign.Message
			params, extras string
		)
		if err := rows.Scan(&m.ID, &m.Line, &m.Input, &m.Phone, &params, &m.Body, &extras, &m.State, &m.AccountID); err != nil {
			return nil, fmt.Errorf("read segment %s of campaign %d: %w", seg, id, err)
		}
		m.CampaignID = id
		if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
			return nil, fmt.Errorf("message %d params: %w", m.ID, err)
		}
		var x struct {
			Header  string   `json:"header"`
			Buttons []string `json:"buttons"`
		}
		if err := json.Unmarshal([]byte(extras), &x); err != nil {
			return nil, fmt.Errorf("message %d extras: %w", m.ID, err)
		}
		m.Header, m.Buttons = x.Header, x.Buttons
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read segment %s of campaign %d: %w", seg, id, err)
	}
	return out, nil
}

// LastInbound returns when each of keys (numbers or user ids) last wrote
// to any of our numbers, under the key or an id linked to it (the customer
// service window as an import screens it); one that never wrote (or whose
// messages were pruned) is absent. The claim reads the same per number in
// its transaction (driver.ClaimTx.LastInbound) and sends from a number the
// person wrote to.
func (r *Reader) LastInbound(ctx context.Context, keys []string) (map[string]time.Time, error) {
	list, _ := json.Marshal(keys) // strings always marshal
	rows, err := r.db.QueryContext(ctx, `WITH k(key) AS (`+r.db.d.jsonStrings()+`),
		ids(key, id) AS (SELECT key, key FROM k UNION SELECT k.key, l.user_id FROM k JOIN recipient_links l ON l.phone = k.key
			UNION SELECT k.key, l.phone FROM k JOIN recipient_links l ON l.user_id = k.key)
		SELECT ids.key, max(i.at) FROM ids JOIN inbound_messages i ON i.phone = ids.id GROUP BY ids.key`, string(list))
	if err != nil {
		return nil, fmt.Errorf("read when recipients last wrote: %w", err)
	}
	defer rows.Close()
	last := map[string]time.Time{}
	for rows.Next() {
		var key string
		var at int64
		if err := rows.Scan(&key, &at); err != nil {
			return nil, fmt.Errorf("read when recipients last wrote: %w", err)
		}
		last[key] = fromNanos(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read when recipients last wrote: %w", err)
	}
	return last, nil
}
