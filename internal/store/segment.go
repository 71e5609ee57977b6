package store

import (
	"context"
	"encoding/json"
	"fmt"

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
func (s *Store) SegmentRows(ctx context.Context, id int64, seg campaign.Segment) ([]campaign.Message, error) {
	where, ok := segmentWhere[seg.Kind]
	if !ok {
		return nil, fmt.Errorf("segment %q: unknown", seg)
	}
	args := []any{id}
	if seg.Kind == campaign.SegmentFailed {
		args = append(args, seg.Code)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, line, input, phone, params, body, extras, state, coalesce(account_id, 0)
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
		if err := unmarshalExtras(extras, &m); err != nil {
			return nil, fmt.Errorf("message %d extras: %w", m.ID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read segment %s of campaign %d: %w", seg, id, err)
	}
	return out, nil
}
