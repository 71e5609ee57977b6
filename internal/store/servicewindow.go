package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The customer service window's reads and writes (issue 27 item 5): when
// each person last wrote, from the inbound messages kept (migration 0037),
// and which campaigns have their rows checked again at each claim
// (campaigns.service_window, migration 0041). The rule itself is
// campaign.WindowOpen; the claim applies it (internal/claim).

type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// lastInbound returns, for the phones that ever wrote, when they last did
// (the webhook's time); a phone that never wrote is absent.
func lastInbound(ctx context.Context, q rowsQuerier, phones []string) (map[string]time.Time, error) {
	last := map[string]time.Time{}
	const chunk = 500 // SQLite's variables per statement stay well under its limit
	for len(phones) > 0 {
		n := min(len(phones), chunk)
		args := make([]any, n)
		for i, p := range phones[:n] {
			args[i] = p
		}
		phones = phones[n:]
		// inbound_messages_phone (phone, at) answers each max from the index.
		rows, err := q.QueryContext(ctx, `SELECT phone, max(at) FROM inbound_messages WHERE phone IN (`+placeholders(n)+`) GROUP BY phone`, args...)
		if err != nil {
			return nil, fmt.Errorf("read when recipients last wrote: %w", err)
		}
		for rows.Next() {
			var phone string
			var at int64
			if err := rows.Scan(&phone, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read when recipients last wrote: %w", err)
			}
			last[phone] = fromNanos(at)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read when recipients last wrote: %w", err)
		}
	}
	return last, nil
}

// SetServiceWindow says whether campaign id's rows are checked for an open
// customer service window at each claim (a text campaign without
// --ignore-window).
func (s *Store) SetServiceWindow(ctx context.Context, id int64, on bool) error {
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET service_window = ? WHERE id = ?`, on, id); err != nil {
			return fmt.Errorf("set the service window check of campaign %d: %w", id, err)
		}
		return nil
	})
}

// skipNoWindow fails a due pending row whose recipient has no open
// customer service window, with the reason.
func skipNoWindow(ctx context.Context, tx *Tx, id int64, why string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, skipNoWindowSQL, now.UnixNano(), campaign.CodeNoWindow, why, id); err != nil {
		return fmt.Errorf("skip message %d: %w", id, err)
	}
	return nil
}

var skipNoWindowSQL = `UPDATE messages SET ` + toSQL(campaign.MoveSkipNoWindow) + `, updated_at = ?, error_code = ?,
	error_message = ? WHERE id = ? AND ` + fromSQL(campaign.MoveSkipNoWindow, "state")

func (c *claimTx) ServiceWindow(ctx context.Context, id int64) (bool, error) {
	var on bool
	if err := c.tx.QueryRowContext(ctx, `SELECT service_window FROM campaigns WHERE id = ?`, id).Scan(&on); err != nil {
		return false, fmt.Errorf("read the service window check of campaign %d: %w", id, err)
	}
	return on, nil
}

func (c *claimTx) LastInbound(ctx context.Context, phones []string) (map[string]time.Time, error) {
	return lastInbound(ctx, c.tx, phones)
}

func (c *claimTx) SkipNoWindow(ctx context.Context, id int64, why string, now time.Time) error {
	if c.tx.send && c.dropped >= maxDroppedInMemory {
		return errUnbounded // as FailSuppressed: a long block goes to an ordinary transaction
	}
	c.dropped++
	return skipNoWindow(ctx, c.tx, id, why, now)
}
