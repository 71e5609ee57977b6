package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// WroteSince is who wrote to which of our numbers (by phone number id)
// at or after since, each person by the key their messages are filed
// under: the customer service windows open now when since is 24 h ago.
// The built-in sandbox starts from it, so that it refuses what Meta would.
func (r *Reader) WroteSince(ctx context.Context, since time.Time) (map[string]campaign.Wrote, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT phone, phone_number_id, max(at) FROM inbound_messages WHERE at >= ?
		GROUP BY phone, phone_number_id`, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read who wrote since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	defer rows.Close()
	out := map[string]campaign.Wrote{}
	for rows.Next() {
		var who, number string
		var at int64
		if err := rows.Scan(&who, &number, &at); err != nil {
			return nil, fmt.Errorf("read who wrote: %w", err)
		}
		if out[who] == nil {
			out[who] = campaign.Wrote{}
		}
		out[who].Note(number, fromNanos(at))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read who wrote: %w", err)
	}
	return out, nil
}
