package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/managesql"
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
	now := s.now().UnixNano()
	return s.write(ctx, func(tx *Tx) error {
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
	})
}

// WithInbox runs fn in one write transaction at the store's clock: a body
// is applied exactly once even with several appliers on one database.
func (s *Store) WithInbox(ctx context.Context, fn func(tx driver.InboxTx, now time.Time) error) error {
	return s.write(ctx, func(tx *Tx) error { return fn(inboxTx{tx}, s.now()) })
}

// inboxTx is InboxTx on SQLite.
type inboxTx struct{ *Tx }

func (tx inboxTx) Bodies(ctx context.Context, max int) ([]driver.InboxBody, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, body FROM webhook_inbox WHERE applied_at IS NULL ORDER BY id LIMIT ?`, max)
	batch, err := scanRows(rows, err, func(rows *sql.Rows, e *driver.InboxBody) error { return rows.Scan(&e.ID, &e.Body) })
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

func (tx inboxTx) NoteNumber(ctx context.Context, display, id string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_numbers (display_number, phone_number_id, seen_at) VALUES (?, ?, ?)
		ON CONFLICT (display_number) DO UPDATE SET phone_number_id = excluded.phone_number_id, seen_at = excluded.seen_at`,
		display, id, now.UnixNano()); err != nil {
		return fmt.Errorf("note number %s: %w", display, err)
	}
	return nil
}

func (tx inboxTx) Part(ctx context.Context, apply func() error) (skip, err error) {
	return SavepointPart(func(q string) error { _, err := tx.ExecContext(ctx, q); return err }, apply, databaseFault)
}

// SavepointPart is InboxTx.Part on either driver: apply under a savepoint,
// undone alone when it fails for a reason of its own (not fault), exec
// running each statement.
func SavepointPart(exec func(stmt string) error, apply func() error, fault func(error) bool) (skip, err error) {
	if err := exec(`SAVEPOINT webhook_part`); err != nil {
		return nil, err
	}
	if err := apply(); err != nil {
		if fault(err) {
			return nil, err
		}
		if rerr := exec(`ROLLBACK TO webhook_part`); rerr != nil {
			return nil, fmt.Errorf("undo: %w", rerr)
		}
		skip = err
	}
	if err := exec(`RELEASE webhook_part`); err != nil {
		return nil, err
	}
	return skip, nil
}

// databaseFault reports whether err is the database failing (busy, full,
// I/O, out of memory, interrupted) rather than one move that cannot apply.
func databaseFault(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrStorage) {
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

// KeepStatus: played, or a status wasend does not track, is not kept
// (message_statuses keeps a rung of the ladder, keyed by the wamid).
func (tx inboxTx) KeepStatus(ctx context.Context, ev campaign.StatusEvent, now time.Time) (kept, matched bool, err error) {
	res, err := tx.ExecContext(ctx, keepStatusesSQL(1), statusArgs(ev, now, 0)...)
	if err != nil {
		return false, false, fmt.Errorf("keep status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	if k, _ := res.RowsAffected(); k > 0 {
		return true, false, nil
	}
	if err := tx.QueryRowContext(ctx, `SELECT message_id IS NOT NULL FROM message_statuses WHERE wamid = ? AND status = ?`,
		ev.WAMID, string(ev.Status)).Scan(&matched); err != nil {
		return false, false, fmt.Errorf("look up status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	return false, matched, nil
}

func (tx inboxTx) OurNumber(ctx context.Context, phoneNumberID string) (bool, error) {
	var ours bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE phone_number_id = ?)`, phoneNumberID).Scan(&ours); err != nil {
		return false, fmt.Errorf("look up number %s: %w", phoneNumberID, err)
	}
	return ours, nil
}

func (tx inboxTx) Suppress(ctx context.Context, phone, reason string, now time.Time) error {
	return suppressOptOut(ctx, tx.Tx, phone, reason, now)
}

// suppressOptOut puts a number on the suppression list for reason.
func suppressOptOut(ctx context.Context, tx *Tx, phone, reason string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)`,
		phone, reason, now.UnixNano()); err != nil {
		return fmt.Errorf("suppress %s: %w", phone, err)
	}
	return nil
}

// wamidRowSQL: the row carrying wamid ?1, else the row its kept statuses
// were matched to (a 131049 that put the row back cleared its wamid).
const wamidRowSQL = `coalesce((SELECT id FROM messages WHERE wamid = ?1 LIMIT 1), (SELECT message_id FROM message_statuses WHERE wamid = ?1 AND message_id IS NOT NULL LIMIT 1))`

// MatchStatus finds the row a status is about: by wamid (wamidRowSQL), else
// by the callback data wasend set on the send ("wasend:cC:mM"), which also
// finds rows whose answer never reached the database. 0: not ours.
func (tx inboxTx) MatchStatus(ctx context.Context, ev campaign.StatusEvent) (int64, error) {
	var (
		id    sql.NullInt64
		phone string
	)
	err := tx.QueryRowContext(ctx, `SELECT `+wamidRowSQL, ev.WAMID).Scan(&id)
	if cid, mid, ok := campaign.ParseCallbackData(ev.CallbackData); err == nil && !id.Valid && ok {
		err = tx.QueryRowContext(ctx, `SELECT id, phone FROM messages WHERE id = ? AND campaign_id = ?`, mid, cid).Scan(&id, &phone)
		// Another database sending from the same business account numbers
		// its rows the same way: the recipient must be the row's too.
		if errors.Is(err, sql.ErrNoRows) || err == nil && !campaign.StatusRecipientIs(phone, ev) {
			return 0, nil
		}
	}
	if err == nil && id.Valid {
		_, err = tx.ExecContext(ctx, `UPDATE message_statuses SET message_id = ? WHERE wamid = ? AND status = ?`, id, ev.WAMID, string(ev.Status))
	}
	if err != nil {
		return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	return id.Int64, nil
}

// StatusRow reads the facts of message id that a kept status's meaning
// depends on.
func (tx inboxTx) StatusRow(ctx context.Context, id int64, ev campaign.StatusEvent) (r campaign.StatusRow, phone string, ok bool, err error) {
	var (
		wamid, delivery sql.NullString
		accountID       sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `SELECT m.state, m.wamid, m.delivery, m.campaign_id, c.cancelled_at IS NOT NULL, m.account_id, m.phone,
		EXISTS (SELECT 1 FROM message_statuses WHERE wamid = ? AND status = `+quote(campaign.DeliveryFailed)+`)
		FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.id = ?`, ev.WAMID, id).
		Scan(&r.State, &wamid, &delivery, &r.CampaignID, &r.Cancelled, &accountID, &phone, &r.WAMIDFailed)
	if errors.Is(err, sql.ErrNoRows) {
		return r, "", false, nil
	}
	if err != nil {
		return r, "", false, fmt.Errorf("read message %d: %w", id, err)
	}
	r.WAMID, r.Delivery, r.AccountID = wamid.String, campaign.Delivery(delivery.String), accountID.Int64
	return r, phone, true, nil
}

// Defer: applied is the opposite of wait.
func (tx inboxTx) Defer(ctx context.Context, ev campaign.StatusEvent, wait bool) error {
	if _, err := tx.ExecContext(ctx, `UPDATE message_statuses SET applied = ? WHERE wamid = ? AND status = ?`,
		!wait, ev.WAMID, string(ev.Status)); err != nil {
		return fmt.Errorf("defer status of %s: %w", ev.WAMID, err)
	}
	return nil
}

// adoptSend: unknown (or requeued, never answered) → sent, with the
// webhook's wamid as the proof; the wamid's other statuses kept
// unmatched are linked to the row.
func (tx inboxTx) AdoptSend(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, adoptSendSQL,
		ev.WAMID, nanos(ev.At), now.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("adopt send of message %d: %w", id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
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
		rs, err := scanRows(q, err, func(q *sql.Rows, r *campaign.StatusRow) error {
			return q.Scan(&r.ID, &r.WAMID, &r.State, &r.Delivery, &r.CampaignID, &r.Cancelled, &r.AccountID)
		})
		if err == nil {
			q, err = tx.QueryContext(ctx, `SELECT wamid, status, coalesce(message_id, 0) FROM message_statuses WHERE wamid `+in, anys(ws)...)
		}
		ks, err := scanRows(q, err, func(q *sql.Rows, k *campaign.KeptStatus) error { return q.Scan(&k.WAMID, &k.Status, &k.MessageID) })
		rows, kept = append(rows, rs...), append(kept, ks...)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the rows and statuses of %d wamids: %w", len(wamids), err)
	}
	return rows, kept, nil
}

// KeepAdvances: the statuses kept as KeepStatus and MatchStatus keep them;
// a row's delivery moves to a higher rung only, its times to earlier ones
// (0: not said), and never off failed.
func (tx inboxTx) KeepAdvances(ctx context.Context, kept []driver.MatchedStatus, moves []campaign.DeliveryAdvance, now time.Time) (moved []int64, err error) {
	err = inBatches(kept, driver.MatchedStatus{}, func(ks []driver.MatchedStatus) error {
		var args []any
		for _, k := range ks {
			args = append(args, statusArgs(k.Ev, now, k.ID)...)
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
		ids, err := scanRows(q, err, func(q *sql.Rows, id *int64) error { return q.Scan(id) })
		moved = append(moved, ids...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("advance the delivery of %d messages: %w", len(moves), err)
	}
	return moved, nil
}

// keepStatusesSQL keeps n statuses given by statusArgs once each; a
// padding status (no wamid) is not kept.
func keepStatusesSQL(n int) string {
	return `INSERT INTO message_statuses (wamid, status, at, recipient, callback_data, error_code, error_title, pricing,
		pricing_type, pricing_model, billable, received_at, message_id) SELECT * FROM (VALUES ` +
		repeated(n, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)") + `) WHERE column1 != '' ON CONFLICT (wamid, status) DO NOTHING`
}

func statusArgs(ev campaign.StatusEvent, now time.Time, id int64) []any {
	return []any{ev.WAMID, string(ev.Status), nanos(ev.At), ev.Recipient, ev.CallbackData,
		sql.NullInt64{Int64: int64(ev.ErrorCode), Valid: ev.ErrorCode != 0}, sql.NullString{String: ev.ErrorTitle, Valid: ev.ErrorCode != 0},
		ev.Pricing, ev.PricingType, ev.PricingModel, billable(ev.NotBillable), now.UnixNano(), sql.NullInt64{Int64: id, Valid: id != 0}}
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

// scanRows reads every row of a query's result (rows, err) with scan.
func scanRows[T any](rows *sql.Rows, err error, scan func(*sql.Rows, *T) error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// failAfterSend: sent → failed with error why, by an asynchronous failure.
func (tx inboxTx) FailAfterSend(ctx context.Context, id int64, ev campaign.StatusEvent, why string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, failAfterSendSQL,
		ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("fail message %d after send: %w", id, err)
	}
	k, _ := res.RowsAffected()
	return k > 0, nil
}

// rescheduleAfterFailure: sent → pending not before retryAt with error why,
// the failed wamid dropped (its statuses stay kept), the campaign reopened.
func (tx inboxTx) RescheduleAfterFailure(ctx context.Context, id int64, ev campaign.StatusEvent, retryAt time.Time, why string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, rescheduleUndeliveredSQL,
		nanos(retryAt), ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
	}
	var cid int64
	if err := tx.QueryRowContext(ctx, `SELECT campaign_id FROM messages WHERE id = ?`, id).Scan(&cid); err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	return true, reopen(ctx, tx.Tx, cid, 1) // one row: by id
}

// PauseCampaign pauses campaign id for why, reopened first if it finished.
func (tx inboxTx) PauseCampaign(ctx context.Context, id int64, why string) error {
	if err := reopenCampaign(ctx, tx.Tx, id); err != nil {
		return err
	}
	return pauseCampaign(ctx, tx.Tx, id, why)
}

// RestrictAccount stops account id until the given time.
func (tx inboxTx) RestrictAccount(ctx context.Context, id int64, until time.Time, why string, code int) error {
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = max(cooldown_until, ?), restriction = ?,
		last_error_code = ? WHERE id = ?`, until.UnixNano(), why, code, id); err != nil {
		return fmt.Errorf("restrict account %d: %w", id, err)
	}
	return nil
}

// DropAccount stops an account for one campaign (Store.DropAccount).
func (tx inboxTx) DropAccount(ctx context.Context, campaignID, accountID int64, why string, code int, now time.Time) error {
	return dropAccount(ctx, tx.Tx, campaignID, accountID, why, code, now)
}

// linkWaitingStatuses matches the statuses kept unmatched for the given
// wamids (their webhook came before the send's answer was recorded, without
// callback data) to the rows that carry them now, and marks them waiting:
// the applier's next pass settles them (Deferred). It runs in the
// transaction that records the wamids, so no status is left behind; a
// status matched once is never linked again. Padding ("") matches nothing.
// The unary + keeps SQLite on the wamid key: statuses of other senders'
// messages stay unmatched for ever, and must not be scanned per send.
func linkWaitingStatuses(ctx context.Context, tx *Tx, wamids []any) error {
	return inBatches(wamids, any(""), func(ws []any) error {
		if _, err := tx.ExecContext(ctx, `UPDATE message_statuses SET message_id = m.id, applied = 0
			FROM messages m WHERE +message_statuses.message_id IS NULL AND message_statuses.wamid IN (`+repeated(len(ws), "?")+`)
			AND m.wamid = message_statuses.wamid`, ws...); err != nil {
			return fmt.Errorf("match statuses that came before their send was recorded: %w", err)
		}
		return nil
	})
}

// DeferredSQL reads Deferred's rows (ScanDeferred), in the order of their
// webhook times, on either driver: the limit's placeholder follows.
const DeferredSQL = `SELECT s.message_id, s.wamid, s.status, s.at, s.recipient, s.callback_data,
	coalesce(s.error_code, 0), coalesce(s.error_title, ''), s.pricing
	FROM message_statuses s JOIN messages m ON m.id = s.message_id
	WHERE s.applied = 0 AND m.state <> 'sending' ORDER BY s.at LIMIT `

// ScanDeferred reads a row of DeferredSQL.
func ScanDeferred(sc rowscan.Scanner) (d driver.DeferredStatus, err error) {
	var at int64
	err = sc.Scan(&d.ID, &d.Ev.WAMID, &d.Ev.Status, &at, &d.Ev.Recipient, &d.Ev.CallbackData,
		&d.Ev.ErrorCode, &d.Ev.ErrorTitle, &d.Ev.Pricing)
	d.Ev.At = fromNanos(at)
	return d, err
}

func (tx inboxTx) Deferred(ctx context.Context, max int) ([]driver.DeferredStatus, error) {
	rows, err := tx.QueryContext(ctx, DeferredSQL+`?`, max)
	ds, err := scanRows(rows, err, func(rows *sql.Rows, d *driver.DeferredStatus) (err error) { *d, err = ScanDeferred(rows); return err })
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	return ds, nil
}

// PauseTemplate: running campaigns sending the template → paused
// with reason why.
func (tx inboxTx) PauseTemplate(ctx context.Context, ev campaign.TemplateEvent, why string) (int, error) {
	return managesql.PauseTemplate(ctx, manageTx{tx.Tx}, sqlite, ev, why)
}

// StopNumber: the accounts of the number an account event names stop
// until the given time, with reason why.
func (tx inboxTx) StopNumber(ctx context.Context, ev campaign.AccountEvent, why string, until time.Time) (int, error) {
	if ev.PhoneNumberID == "" && ev.DisplayNumber != "" {
		err := tx.QueryRowContext(ctx, `SELECT phone_number_id FROM webhook_numbers WHERE display_number = ?`,
			strings.TrimPrefix(ev.DisplayNumber, "+")).Scan(&ev.PhoneNumberID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("look up number %s: %w", ev.DisplayNumber, err)
		}
	}
	if ev.PhoneNumberID == "" {
		return 0, nil // a number no status webhook named yet
	}
	res, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = max(cooldown_until, ?), restriction = ?
		WHERE phone_number_id = ?`, until.UnixNano(), why, ev.PhoneNumberID)
	if err != nil {
		return 0, fmt.Errorf("stop account of number %s: %w", ev.PhoneNumberID, err)
	}
	k, _ := res.RowsAffected()
	return int(k), nil
}
