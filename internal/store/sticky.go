package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// lastContact is what the send log knows of a number: the latest request
// to it from any of our accounts, and the account whose message it last
// accepted.
type lastContact struct {
	at      time.Time // zero: none logged
	sentAt  time.Time // zero: none accepted
	account int64     // that sent at sentAt
	// byAccount is the latest request from each account, for the windows
	// of the portfolios.
	byAccount map[int64]time.Time
}

// readLastContacts looks the numbers of a claim's rows up in the send log,
// in one query.
func readLastContacts(ctx context.Context, q querier, msgs []campaign.Message) (map[string]lastContact, error) {
	out := make(map[string]lastContact, len(msgs))
	if len(msgs) == 0 {
		return out, nil
	}
	args := make([]any, padded(len(msgs)))
	for i := range args {
		args[i] = "" // padding: no number is empty
	}
	for i, m := range msgs {
		args[i] = m.Phone
	}
	// One row per account that ever messaged a number: a handful each.
	rows, err := q.QueryContext(ctx, `SELECT phone, account_id, last_at, sent_at
		FROM contact_log WHERE phone IN (`+repeated(len(args), "?")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("look up the send log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			phone      string
			account    int64
			at, sentAt int64
		)
		if err := rows.Scan(&phone, &account, &at, &sentAt); err != nil {
			return nil, fmt.Errorf("look up the send log: %w", err)
		}
		c := out[phone]
		if c.byAccount == nil {
			c.byAccount = map[int64]time.Time{}
		}
		last := fromNanos(at)
		c.byAccount[account] = last
		if last.After(c.at) {
			c.at = last
		}
		if sent := fromNanos(sentAt); sentAt > 0 && sent.After(c.sentAt) {
			c.sentAt, c.account = sent, account
		}
		out[phone] = c
	}
	return out, rows.Err()
}

// pairGap is the campaign's --pair-gap.
func pairGap(ctx context.Context, q querier, campaignID int64) (time.Duration, error) {
	var gap int64
	if err := q.QueryRowContext(ctx, `SELECT pair_gap FROM campaigns WHERE id = ?`, campaignID).Scan(&gap); err != nil {
		return 0, fmt.Errorf("read the pair gap of campaign %d: %w", campaignID, err)
	}
	return time.Duration(gap), nil
}

// SetPairGap sets how far apart two messages to one person from any of our
// numbers must be, for the claims of a campaign.
func (s *Store) SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error {
	if gap < 0 {
		return fmt.Errorf("pair gap %v: must not be negative", gap)
	}
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET pair_gap = ? WHERE id = ?`, int64(gap), campaignID); err != nil {
			return fmt.Errorf("set the pair gap of campaign %d: %w", campaignID, err)
		}
		return nil
	})
}

// deferMessage puts off a due row until at: the pair gap, or its sticky
// number being busy.
func deferMessage(ctx context.Context, tx *Tx, id int64, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = ?, window_wait = ? WHERE id = ? AND state = 'pending'`,
		at.UnixNano(), putOffNone, id); err != nil {
		return fmt.Errorf("put off message %d: %w", id, err)
	}
	return nil
}

// countStickyBreaks adds the claims' broken stickiness to the campaign's
// tally.
func countStickyBreaks(ctx context.Context, tx *Tx, campaignID int64, breaks map[string]int) error {
	for reason, n := range breaks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sticky_breaks (campaign_id, reason, n) VALUES (?, ?, ?)
			ON CONFLICT (campaign_id, reason) DO UPDATE SET n = n + excluded.n`, campaignID, reason, n); err != nil {
			return fmt.Errorf("count sticky breaks: %w", err)
		}
	}
	return nil
}
