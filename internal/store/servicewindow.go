package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// The customer service window's reads and writes (issue 27 item 5): when
// each person last wrote to each number, from the inbound messages kept
// (migration 0037), and which campaigns have their rows checked again at
// each claim (campaigns.service_window, migration 0041). The rule itself is
// campaign.WindowOpen; the claim applies it (internal/claim).

type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// lastInbound returns, for each of keys (numbers or user ids) whose person
// ever wrote, when they last wrote to each business number: under the key
// or an id linked to it (recipient_links), for one person is one person.
// inbound_messages_number (migration 0048) answers each from the index.
func lastInbound(ctx context.Context, q rowsQuerier, keys []string) (map[string]campaign.Wrote, error) {
	list, _ := json.Marshal(keys) // strings always marshal
	rows, err := q.QueryContext(ctx, `WITH k(key) AS (SELECT value FROM json_each(?)),
		ids(key, id) AS (SELECT key, key FROM k UNION SELECT k.key, l.user_id FROM k JOIN recipient_links l ON l.phone = k.key
			UNION SELECT k.key, l.phone FROM k JOIN recipient_links l ON l.user_id = k.key)
		SELECT ids.key, i.phone_number_id, max(i.at) FROM ids JOIN inbound_messages i ON i.phone = ids.id
		GROUP BY ids.key, i.phone_number_id`, string(list))
	if err != nil {
		return nil, fmt.Errorf("read when recipients last wrote: %w", err)
	}
	defer rows.Close()
	return rowscan.Wrote(rows)
}

// SetServiceWindow says whether campaign id's rows are checked for an open
// customer service window at each claim (managesql.SetServiceWindow).
func (s *Store) SetServiceWindow(ctx context.Context, id int64, on bool) error {
	return s.write(ctx, func(tx *Tx) error { return managesql.SetServiceWindow(ctx, manageTx{tx}, sqlite, id, on) })
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

func (c *claimTx) LastInbound(ctx context.Context, keys []string) (map[string]campaign.Wrote, error) {
	return lastInbound(ctx, c.tx, keys)
}

func (c *claimTx) SkipNoWindow(ctx context.Context, id int64, why string, now time.Time) error {
	if c.tx.send && c.dropped >= maxDroppedInMemory {
		return errUnbounded // as FailSuppressed: a long block goes to an ordinary transaction
	}
	c.dropped++
	return skipNoWindow(ctx, c.tx, id, why, now)
}
