package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/slowtrace"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/inboxsql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Delivery webhooks: the inbox the receiver writes, the statuses kept, and
// the named moves that apply Meta's statuses to messages. Which move a
// status makes is decided by internal/webhook, which drains the inbox over
// InboxTx. Every move is one UPDATE whose WHERE names the states it may
// start from, so a move that no longer applies (a duplicate, a late
// status, a row another process changed) changes nothing.

// AddToInbox stores webhook bodies exactly as received, in one transaction
// and in the order given: a few statements of many rows (padding, no body,
// is not stored).
func (s *Store) AddToInbox(ctx context.Context, bodies [][]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	now, sp := s.now().UnixNano(), slowtrace.Start()
	s.wmu.LockFirst() // the receiver answers once this commits: before this process's other writes
	defer s.wmu.Unlock()
	return writeIn(ctx, s, false, func(tx *Tx) error {
		return inBatches(bodies, nil, func(bs [][]byte) error {
			args := make([]any, 0, 2*len(bs))
			for _, b := range bs {
				args = append(args, now, b)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_inbox (received_at, body) SELECT * FROM (VALUES `+
				repeated(len(bs), "(?, ?)")+`) WHERE column2 IS NOT NULL`, args...); err != nil {
				return fmt.Errorf("store %d webhook bodies: %w", len(bodies), err)
			}
			return nil
		})
	}, sp)
}

// WithInbox runs fn in one write transaction at the store's clock: a body
// is applied exactly once even with several appliers on one database.
func (s *Store) WithInbox(ctx context.Context, fn func(tx driver.InboxTx, now time.Time) error) error {
	return s.writeSend(ctx, func(tx *Tx) error { return fn(newInboxTx(tx), s.now()) })
}

func newInboxTx(tx *Tx) inboxTx { return inboxTx{tx, inboxsql.Moves{Q: manageTx{tx}, D: sqlite}} }

// inboxTx is InboxTx on SQLite: the statements both drivers write alike
// (inboxsql.Moves) and those below.
type inboxTx struct {
	*Tx
	inboxsql.Moves
}

func (tx inboxTx) Bodies(ctx context.Context, max int) ([]driver.InboxBody, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, body FROM webhook_inbox WHERE applied_at IS NULL ORDER BY id LIMIT ?`, max)
	batch, err := rowscan.All(rows, err, func(rows *sql.Rows, e *driver.InboxBody) error { return rows.Scan(&e.ID, &e.Body) })
	if err != nil {
		return nil, fmt.Errorf("read webhook inbox: %w", err)
	}
	return batch, nil
}

// Applied: ids as one JSON array, one statement text for any number.
func (tx inboxTx) Applied(ctx context.Context, ids []int64, why string, now time.Time) error {
	list, _ := json.Marshal(ids)
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_inbox SET applied_at = ?, error = ? WHERE id IN (SELECT value FROM json_each(?))`,
		now.UnixNano(), sql.NullString{String: why, Valid: why != ""}, string(list)); err != nil {
		return fmt.Errorf("mark %d webhook bodies applied: %w", len(ids), err)
	}
	return nil
}

func (tx inboxTx) Part(ctx context.Context, apply func() error) (skip, err error) {
	return inboxsql.SavepointPart(func(q string) error { _, err := tx.ExecContext(ctx, q); return err }, apply, databaseFault)
}

// databaseFault reports whether err is the database failing (busy, full,
// I/O, out of memory, interrupted), or the transaction to run again as an
// ordinary write (errUnbounded), rather than one move that cannot apply.
func databaseFault(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrStorage) || errors.Is(err, errUnbounded) {
		return true
	}
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrNomem, sqlite3.ErrReadonly, sqlite3.ErrInterrupt, sqlite3.ErrIoErr,
		sqlite3.ErrCorrupt, sqlite3.ErrFull, sqlite3.ErrCantOpen, sqlite3.ErrProtocol, sqlite3.ErrNotADB:
		return true
	}
	return false
}

// adoptSend: unknown (or requeued, never answered) → sent, with the
// webhook's wamid as the proof; the wamid's other statuses kept
// unmatched are linked to the row.
func (tx inboxTx) AdoptSend(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	if ok, err := tx.Adopt(ctx, id, ev, now); !ok || err != nil {
		return false, err
	}
	// The wamid's other statuses that came without callback data.
	return true, linkWaitingStatuses(ctx, tx.Tx, []any{ev.WAMID})
}

// StatusFacts: padding ("") matches no wamid.
func (tx inboxTx) StatusFacts(ctx context.Context, wamids []string) (rows []campaign.StatusRow, kept []campaign.KeptStatus, err error) {
	err = inBatches(wamids, "", func(ws []string) error {
		in := `IN (` + repeated(len(ws), "?") + `)`
		q, err := tx.QueryContext(ctx, `SELECT m.id, m.wamid, m.state, coalesce(m.delivery, ''), m.campaign_id, c.cancelled_at IS NOT NULL,
			coalesce(m.account_id, 0) FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.wamid `+in, anys(ws)...)
		rs, err := rowscan.All(q, err, func(q *sql.Rows, r *campaign.StatusRow) error {
			return q.Scan(&r.ID, &r.WAMID, &r.State, &r.Delivery, &r.CampaignID, &r.Cancelled, &r.AccountID)
		})
		if err == nil {
			q, err = tx.QueryContext(ctx, `SELECT wamid, status, coalesce(message_id, 0) FROM message_statuses WHERE wamid `+in, anys(ws)...)
		}
		ks, err := rowscan.All(q, err, func(q *sql.Rows, k *campaign.KeptStatus) error { return q.Scan(&k.WAMID, &k.Status, &k.MessageID) })
		rows, kept = append(rows, rs...), append(kept, ks...)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the rows and statuses of %d wamids: %w", len(wamids), err)
	}
	return rows, kept, nil
}

// KeepAdvances: the statuses kept as KeepStatus and LinkStatus keep them;
// a row's delivery moves to a higher rung only, its times to earlier ones
// (0: not said), and never off failed.
func (tx inboxTx) KeepAdvances(ctx context.Context, kept []driver.MatchedStatus, moves []campaign.DeliveryAdvance, now time.Time) (moved []int64, err error) {
	err = inBatches(kept, driver.MatchedStatus{}, func(ks []driver.MatchedStatus) error {
		var args []any
		for _, k := range ks {
			args = append(args, inboxsql.StatusArgs(k.Ev, now, k.ID)...)
		}
		_, err := tx.ExecContext(ctx, keepStatusesSQL(len(ks)), args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("keep %d statuses: %w", len(kept), err)
	}
	err = inBatches(moves, campaign.DeliveryAdvance{}, func(ms []campaign.DeliveryAdvance) error {
		var args []any
		for _, m := range ms {
			args = append(args, m.ID, m.WAMID, string(m.To), nanos(m.DeliveredAt), nanos(m.ReadAt))
		}
		q, err := tx.QueryContext(ctx, `UPDATE messages SET
			delivery = CASE WHEN `+deliveryRankSQL("delivery")+` < `+deliveryRankSQL("v.column3")+` THEN v.column3 ELSE delivery END,
			delivered_at = CASE WHEN v.column4 != 0 THEN min(coalesce(delivered_at, v.column4), v.column4) ELSE delivered_at END,
			read_at = CASE WHEN v.column5 != 0 THEN min(coalesce(read_at, v.column5), v.column5) ELSE read_at END
			FROM (VALUES `+repeated(len(ms), "(?, ?, ?, ?, ?)")+`) AS v WHERE messages.id = v.column1 AND messages.state = `+
			quote(campaign.Sent)+` AND messages.wamid = v.column2 AND NOT `+deliveryIsSQL("messages.delivery", campaign.DeliveryFailed)+`
			RETURNING messages.id`, args...)
		ids, err := rowscan.All(q, err, func(q *sql.Rows, id *int64) error { return q.Scan(id) })
		moved = append(moved, ids...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("advance the delivery of %d messages: %w", len(moves), err)
	}
	return moved, nil
}

// keepStatusesSQL keeps n statuses given by inboxsql.StatusArgs once each; a
// padding status (no wamid) is not kept.
func keepStatusesSQL(n int) string {
	return `INSERT INTO message_statuses (wamid, status, at, recipient, callback_data, error_code, error_title, pricing,
		pricing_type, pricing_model, billable, received_at, message_id) SELECT * FROM (VALUES ` +
		repeated(n, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)") + `) WHERE column1 != '' ON CONFLICT (wamid, status) DO NOTHING`
}

// inBatches runs fn over vs in statements of at most maxSentBatch rows,
// padded (padded) with pad so that their texts repeat.
func inBatches[T any](vs []T, pad T, fn func(batch []T) error) error {
	for len(vs) > 0 {
		n := min(len(vs), maxSentBatch)
		b := append(make([]T, 0, padded(n)), vs[:n]...)
		for len(b) < cap(b) {
			b = append(b, pad)
		}
		if err := fn(b); err != nil {
			return err
		}
		vs = vs[n:]
	}
	return nil
}

// linkWaitingStatuses matches the statuses kept unmatched for the given wamids
// (their webhook, without callback data, came before the send's answer was
// recorded) to the rows that carry them now, and marks them waiting for the
// applier's next pass (Deferred), in the transaction that records the wamids:
// none is left behind, none linked twice. Padding ("") matches nothing. The
// unary + keeps SQLite on the wamid key: other senders' statuses stay unmatched
// for ever and must not be scanned per send. When one probe finds none
// unmatched, as usually, the wamids are not looked up.
func linkWaitingStatuses(ctx context.Context, tx *Tx, wamids []any) error {
	var waiting bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM message_statuses WHERE message_id IS NULL)`).Scan(&waiting); err != nil {
		return fmt.Errorf("look for statuses that came before their send was recorded: %w", err)
	} else if !waiting {
		return nil
	}
	return inBatches(wamids, any(""), func(ws []any) error {
		if _, err := tx.ExecContext(ctx, `UPDATE message_statuses SET message_id = m.id, applied = 0
			FROM messages m WHERE +message_statuses.message_id IS NULL AND message_statuses.wamid IN (`+repeated(len(ws), "?")+`)
			AND m.wamid = message_statuses.wamid`, ws...); err != nil {
			return fmt.Errorf("match statuses that came before their send was recorded: %w", err)
		}
		return nil
	})
}

func (tx inboxTx) Deferred(ctx context.Context, max int) ([]driver.DeferredStatus, error) {
	rows, err := tx.QueryContext(ctx, inboxsql.DeferredSQL+`?`, max)
	ds, err := rowscan.All(rows, err, func(r *sql.Rows, d *driver.DeferredStatus) (err error) {
		*d, err = inboxsql.ScanDeferred(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	return ds, nil
}
