package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// ExportRow is one recipient of a campaign as it stands.
type ExportRow struct {
	Line         int
	Input        string
	Phone        string // E.164
	State        campaign.State
	Account      string // the account of the last request; "" if none yet
	Attempts     int
	WAMID        string
	ErrorCode    int // 0: none
	ErrorMessage string
	UpdatedAt    time.Time // zero: never changed since the import
	SentAt       time.Time // zero: not sent
	// What status webhooks said: "" before any, else sent, delivered,
	// read or failed; the webhooks' own times.
	Delivery    campaign.Delivery
	DeliveredAt time.Time
	ReadAt      time.Time
	// The first reply of its recipient (zero: none) and its text; when
	// they opted out by answering it.
	RepliedAt  time.Time
	Reply      string
	OptedOutAt time.Time
	// WroteAt is when its recipient last wrote to the number the row is
	// assigned to (any of ours while it has none) — Meta keeps the customer
	// service window per business number —, zero: never, or pruned; the
	// window is open until a day after (campaign.WindowOpen).
	WroteAt time.Time
}

// ExportMessages calls fn for each recipient of campaign id, in file order,
// optionally only those in state (all when ""). Rows stream from the
// database one at a time, so a campaign of any size exports in constant
// memory. An error from fn stops the export and is returned as is.
func (r *Reader) ExportMessages(ctx context.Context, id int64, state campaign.State, fn func(ExportRow) error) error {
	if _, err := r.src.Campaign(ctx, id); err != nil {
		return err
	}
	rows, err := r.db.QueryContext(ctx, `SELECT m.line, m.input, m.phone, m.state, coalesce(a.name, ''), m.attempts,
		coalesce(m.wamid, ''), coalesce(m.error_code, 0), coalesce(m.error_message, ''), m.updated_at, m.sent_at,
		coalesce(m.delivery, ''), m.delivered_at, m.read_at, m.first_reply_at, coalesce(m.first_reply_text, ''), m.opted_out_at,
		(SELECT max(i.at) FROM inbound_messages i WHERE i.phone = m.phone
			AND (a.phone_number_id IS NULL OR i.phone_number_id = a.phone_number_id))
		FROM messages m LEFT JOIN accounts a ON a.id = m.account_id
		WHERE m.campaign_id = ? AND (? = '' OR m.state = ?)
		ORDER BY m.line, m.id`, id, string(state), string(state))
	if err != nil {
		return fmt.Errorf("export campaign %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r             ExportRow
			updated, sent sql.NullInt64
			delivered     sql.NullInt64
			read          sql.NullInt64
			replied, out  sql.NullInt64
			wrote         sql.NullInt64
		)
		if err := rows.Scan(&r.Line, &r.Input, &r.Phone, &r.State, &r.Account, &r.Attempts,
			&r.WAMID, &r.ErrorCode, &r.ErrorMessage, &updated, &sent, &r.Delivery, &delivered, &read, &replied, &r.Reply, &out, &wrote); err != nil {
			return fmt.Errorf("export campaign %d: %w", id, err)
		}
		r.UpdatedAt, r.SentAt = fromNullNanos(updated), fromNullNanos(sent)
		r.DeliveredAt, r.ReadAt = fromNullNanos(delivered), fromNullNanos(read)
		r.RepliedAt, r.OptedOutAt = fromNullNanos(replied), fromNullNanos(out)
		r.WroteAt = fromNullNanos(wrote)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export campaign %d: %w", id, err)
	}
	return nil
}
