package readmodel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Small reads status and the commands make of what the sending path and
// the webhook receiver keep: waits for the shared limits, sticky breaks,
// the inbox's skipped bodies, the suppression list's size, templates.

// LimitsWait returns what the campaign's host last noted while it waited
// for the shared limits; a zero Since when the last claim was admitted. A
// host stopped while waiting leaves its note: Seen tells how recent it is.
func (r *Reader) LimitsWait(ctx context.Context, campaignID int64) (campaign.LimitsWait, error) {
	var (
		w           campaign.LimitsWait
		since, seen int64
		reason      string
	)
	err := r.db.QueryRowContext(ctx, `SELECT since, seen, reason, error FROM gate_waits WHERE campaign_id = ?`, campaignID).
		Scan(&since, &seen, &reason, &w.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return w, nil
	}
	if err != nil {
		return w, fmt.Errorf("read the wait for shared limits of campaign %d: %w", campaignID, err)
	}
	w.Since, w.Seen, w.Reason = fromNanos(since), fromNanos(seen), campaign.WaitReason(reason)
	return w, nil
}

// StickyBreaks returns how often a campaign's recipients could not get the
// number that messaged them within 30 days, by reason.
func (r *Reader) StickyBreaks(ctx context.Context, campaignID int64) (map[string]int, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT reason, n FROM sticky_breaks WHERE campaign_id = ?`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("read sticky breaks: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			reason string
			n      int
		)
		if err := rows.Scan(&reason, &n); err != nil {
			return nil, fmt.Errorf("read sticky breaks: %w", err)
		}
		out[reason] = n
	}
	return out, rows.Err()
}

// InboxReasons says how many bodies stored since a time were applied with
// a reason — not a notification, or a part that could not apply and was
// skipped — and the latest reason, with when its body came.
type InboxReasons struct {
	Bodies   int
	Latest   string
	LatestAt time.Time
}

// WebhookInboxReasons reads the InboxReasons of bodies received since.
func (r *Reader) WebhookInboxReasons(ctx context.Context, since time.Time) (InboxReasons, error) {
	var out InboxReasons
	rows, err := r.db.QueryContext(ctx, `SELECT error, received_at FROM webhook_inbox
		WHERE error IS NOT NULL AND received_at >= ? ORDER BY id DESC`, since.UnixNano())
	if err != nil {
		return out, fmt.Errorf("read webhook inbox: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			why string
			at  int64
		)
		if err := rows.Scan(&why, &at); err != nil {
			return out, fmt.Errorf("read webhook inbox: %w", err)
		}
		if out.Bodies == 0 {
			out.Latest, out.LatestAt = why, fromNanos(at)
		}
		out.Bodies++
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read webhook inbox: %w", err)
	}
	return out, nil
}

// CountSuppressions returns how many numbers are on the suppression list,
// so a caller can skip per-row lookups against an empty one.
func (r *Reader) CountSuppressions(ctx context.Context) (int, error) {
	var n int
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM suppressions`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read suppression list: %w", err)
	}
	return n, nil
}

// Templates returns every synced template, by WABA, name and language.
func (r *Reader) Templates(ctx context.Context) ([]campaign.Template, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT waba_id, name, language, status, category, parameter_format, components, synced_at
		FROM templates ORDER BY `+r.db.d.bytewise("waba_id")+`, `+r.db.d.bytewise("name")+`, `+r.db.d.bytewise("language"))
	if err != nil {
		return nil, fmt.Errorf("list templates: %w", err)
	}
	defer rows.Close()
	var out []campaign.Template
	for rows.Next() {
		var (
			t  campaign.Template
			at int64
		)
		if err := rows.Scan(&t.WABA, &t.Name, &t.Language, &t.Status, &t.Category, &t.ParameterFormat, &t.Components, &at); err != nil {
			return nil, fmt.Errorf("read template: %w", err)
		}
		t.SyncedAt = fromNanos(at)
		out = append(out, t)
	}
	return out, rows.Err()
}
