package readmodel

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Suppressions returns the whole list, ordered by phone.
func (r *Reader) Suppressions(ctx context.Context) ([]campaign.Suppression, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT phone, reason, created_at FROM suppressions ORDER BY `+r.db.d.bytewise("phone"))
	if err != nil {
		return nil, fmt.Errorf("list suppressions: %w", err)
	}
	defer rows.Close()
	var out []campaign.Suppression
	for rows.Next() {
		var (
			sp      campaign.Suppression
			created int64
		)
		if err := rows.Scan(&sp.Phone, &sp.Reason, &created); err != nil {
			return nil, fmt.Errorf("list suppressions: %w", err)
		}
		sp.CreatedAt = fromNanos(created)
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list suppressions: %w", err)
	}
	return out, nil
}

// OptIn is an opt-in a suppressed number sent after it was suppressed:
// listed for the operator, who decides (suppress remove).
type OptIn struct {
	Phone  string
	Reason string // keyword "START", resumed marketing messages in WhatsApp
	At     time.Time
}

// OptInsSinceSuppressed returns, per suppressed number, the latest opt-in
// it sent after it was listed.
func (r *Reader) OptInsSinceSuppressed(ctx context.Context) (map[string]OptIn, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT i.phone, i.reason, i.at FROM inbound_messages i
		JOIN suppressions s ON s.phone = i.phone
		WHERE i.kind = 'opt-in' AND i.at >= s.created_at ORDER BY i.at`)
	if err != nil {
		return nil, fmt.Errorf("read opt-ins: %w", err)
	}
	defer rows.Close()
	out := map[string]OptIn{}
	for rows.Next() {
		var (
			o  OptIn
			at int64
		)
		if err := rows.Scan(&o.Phone, &o.Reason, &at); err != nil {
			return nil, fmt.Errorf("read opt-ins: %w", err)
		}
		o.At = fromNanos(at)
		out[o.Phone] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read opt-ins: %w", err)
	}
	return out, nil
}
