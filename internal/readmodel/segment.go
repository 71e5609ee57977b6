package readmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// LastInbound returns when each of phones last wrote to any of our numbers
// (the customer service window); one that never wrote (or whose messages
// were pruned) is absent. The claim reads the same in its transaction
// (store.ClaimTx.LastInbound).
func (r *Reader) LastInbound(ctx context.Context, phones []string) (map[string]time.Time, error) {
	last := map[string]time.Time{}
	const chunk = 500 // SQLite's variables per statement stay well under its limit
	for len(phones) > 0 {
		n := min(len(phones), chunk)
		args := make([]any, n)
		for i, p := range phones[:n] {
			args[i] = p
		}
		phones = phones[n:]
		q := `SELECT phone, max(at) FROM inbound_messages WHERE phone IN (?` + strings.Repeat(", ?", n-1) + `) GROUP BY phone`
		if err := func() error {
			rows, err := r.db.QueryContext(ctx, q, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var (
					phone string
					at    int64
				)
				if err := rows.Scan(&phone, &at); err != nil {
					return err
				}
				last[phone] = fromNanos(at)
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("read when recipients last wrote: %w", err)
		}
	}
	return last, nil
}
