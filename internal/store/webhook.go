package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/wasend/wasend/internal/campaign"
)

// Delivery webhooks: the inbox the receiver writes, the statuses kept, and
// the named moves that apply Meta's statuses to messages. Which move a
// status makes is decided outside the store (WebhookRules) from the facts
// read here. Every move is one UPDATE whose WHERE names the states it may
// start from, so a move that no longer applies (a duplicate, a late
// status, a row another process changed) changes nothing.

// AddToInbox stores webhook bodies exactly as received, in one transaction.
func (s *Store) AddToInbox(ctx context.Context, bodies [][]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	now := s.now().UnixNano()
	return s.write(ctx, func(tx *Tx) error {
		for _, b := range bodies {
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_inbox (received_at, body) VALUES (?, ?)`, now, b); err != nil {
				return fmt.Errorf("store webhook body: %w", err)
			}
		}
		return nil
	})
}

// WebhookRules decide what webhook bodies mean (internal/webhook's Rules
// are the ones): the store keeps what the bodies carry and makes the moves
// the rules name, deciding none itself.
type WebhookRules interface {
	// Decode reads one stored body.
	Decode(body []byte) (campaign.Notification, error)
	// Settle decides what a kept status does to the row it matched.
	Settle(row campaign.StatusRow, ev campaign.StatusEvent, now time.Time) campaign.StatusAction
	// OptOut decides about a status no row matches: phone is suppressed
	// with reason (when not "") if the sending number is one of ours.
	OptOut(ev campaign.StatusEvent, now time.Time) (phone, reason string)
	// TemplatePause is why the campaigns sending ev's template pause; ""
	// when they do not.
	TemplatePause(ev campaign.TemplateEvent) string
	// AccountStop is why and until when an account event stops the
	// accounts of its number.
	AccountStop(ev campaign.AccountEvent, now time.Time) (why string, until time.Time)
	// Inbound decides what an inbound message means (inbound.go).
	Inbound(m campaign.InboundMessage) campaign.InboundMeaning
	// ReplyWindow is how long after our message an answer is a reply.
	ReplyWindow() time.Duration
}

// DrainInbox applies up to max stored bodies, oldest first, and settles
// statuses that were waiting for their row's send to be recorded, in one
// transaction: a body is applied exactly once even with several appliers
// on one database. It returns what it did; Bodies == 0 means the inbox
// was empty.
func (s *Store) DrainInbox(ctx context.Context, max int, rules WebhookRules) (campaign.ApplyReport, error) {
	var rep campaign.ApplyReport
	err := s.write(ctx, func(tx *Tx) error {
		rep = campaign.ApplyReport{}
		now := s.now()
		rows, err := tx.QueryContext(ctx, `SELECT id, body FROM webhook_inbox WHERE applied_at IS NULL ORDER BY id LIMIT ?`, max)
		if err != nil {
			return fmt.Errorf("read webhook inbox: %w", err)
		}
		type entry struct {
			id   int64
			body []byte
		}
		var batch []entry
		for rows.Next() {
			var e entry
			if err := rows.Scan(&e.id, &e.body); err != nil {
				rows.Close()
				return fmt.Errorf("read webhook inbox: %w", err)
			}
			batch = append(batch, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read webhook inbox: %w", err)
		}
		for _, e := range batch {
			n, derr := rules.Decode(e.body)
			var why sql.NullString
			if derr != nil {
				rep.Malformed++
				why = sql.NullString{String: derr.Error(), Valid: true}
			} else {
				skips := len(rep.Skips)
				if err := applyNotification(ctx, tx, n, rules, now, &rep); err != nil {
					return fmt.Errorf("apply webhook body %d: %w", e.id, err)
				}
				if len(rep.Skips) > skips {
					why = sql.NullString{String: strings.Join(rep.Skips[skips:], "; "), Valid: true}
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_inbox SET applied_at = ?, error = ? WHERE id = ?`,
				now.UnixNano(), why, e.id); err != nil {
				return fmt.Errorf("mark webhook body %d applied: %w", e.id, err)
			}
			rep.Bodies++
		}
		if err := settleDeferred(ctx, tx, rules, now, max, &rep); err != nil {
			return err
		}
		return linkWaitingInbound(ctx, tx, rules, now, max, &rep)
	})
	return rep, err
}

// applyNotification applies one body, each of its parts (a number, a
// status, an event) on its own: a part that cannot apply is undone alone
// and skipped with its reason (part), so that one status never holds up
// the inbox. Only a fault of the database itself fails the body.
func applyNotification(ctx context.Context, tx *Tx, n campaign.Notification, rules WebhookRules, now time.Time, rep *campaign.ApplyReport) error {
	for display, id := range n.Numbers {
		err := part(ctx, tx, rep, "number "+display, func() error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_numbers (display_number, phone_number_id, seen_at) VALUES (?, ?, ?)
			ON CONFLICT (display_number) DO UPDATE SET phone_number_id = excluded.phone_number_id, seen_at = excluded.seen_at`,
				display, id, now.UnixNano()); err != nil {
				return fmt.Errorf("note number %s: %w", display, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, ev := range n.Statuses {
		err := part(ctx, tx, rep, fmt.Sprintf("status %s of %s", ev.Status, ev.WAMID), func() error {
			return keepStatus(ctx, tx, ev, rules, now, rep)
		})
		if err != nil {
			return err
		}
	}
	for _, m := range n.Inbound {
		err := part(ctx, tx, rep, "inbound message "+m.WAMID, func() error {
			return keepInbound(ctx, tx, m, rules, now, rep)
		})
		if err != nil {
			return err
		}
	}
	for _, ev := range n.Templates {
		why := rules.TemplatePause(ev)
		if why == "" {
			continue
		}
		err := part(ctx, tx, rep, fmt.Sprintf("template %s %s", ev.Template, ev.Event), func() error {
			k, err := pauseTemplateCampaigns(ctx, tx, ev, why)
			rep.Paused += k
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, ev := range n.Upgrades {
		err := part(ctx, tx, rep, fmt.Sprintf("%s %s", ev.Field, ev.Event), func() error {
			_, err := raiseThroughput(ctx, tx, ev, now)
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, ev := range n.Accounts {
		err := part(ctx, tx, rep, fmt.Sprintf("%s %s", ev.Field, ev.Event), func() error {
			why, until := rules.AccountStop(ev, now)
			k, err := restrictAccount(ctx, tx, ev, why, until)
			rep.Stopped += k
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// part applies one part of a body under a savepoint. When apply fails for
// a reason of its own (a row or campaign it cannot move, a constraint),
// what it wrote and counted is undone, the reason goes to rep.Skips, and
// part returns nil. A fault of the database itself (busy, full, I/O) is
// returned: the whole drain rolls back and the bodies stay in the inbox.
func part(ctx context.Context, tx *Tx, rep *campaign.ApplyReport, what string, apply func() error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT webhook_part`); err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	saved := *rep
	saved.ByStatus = maps.Clone(rep.ByStatus)
	err := apply()
	if err != nil && !databaseFault(err) {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO webhook_part`); rerr != nil {
			return fmt.Errorf("undo %s: %w", what, rerr)
		}
		*rep = saved
		rep.Skipped++
		rep.Skips = append(rep.Skips, fmt.Sprintf("%s not applied: %v", what, err))
		err = nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `RELEASE webhook_part`); err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	return nil
}

// databaseFault reports whether err is the database failing (busy, full,
// I/O, out of memory, interrupted) rather than one move that cannot apply.
func databaseFault(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStorage) {
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

// keepStatus stores a status once and applies it to its row.
func keepStatus(ctx context.Context, tx *Tx, ev campaign.StatusEvent, rules WebhookRules, now time.Time, rep *campaign.ApplyReport) error {
	rep.Statuses++
	if ev.Status.Rank() == 0 || ev.WAMID == "" {
		// Played, or a status wasend does not track: message_statuses keeps
		// a rung of the ladder, keyed by the wamid.
		rep.Unmatched++
		return nil
	}
	code := sql.NullInt64{Int64: int64(ev.ErrorCode), Valid: ev.ErrorCode != 0}
	title := sql.NullString{String: ev.ErrorTitle, Valid: ev.ErrorCode != 0}
	res, err := tx.ExecContext(ctx, `INSERT INTO message_statuses (wamid, status, at, recipient, callback_data,
		error_code, error_title, pricing, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (wamid, status) DO NOTHING`,
		ev.WAMID, string(ev.Status), nanos(ev.At), ev.Recipient, ev.CallbackData, code, title, ev.Pricing, now.UnixNano())
	if err != nil {
		return fmt.Errorf("keep status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		// Kept before. Matched, it is a duplicate; still waiting for its
		// wamid, it is the same unmatched status again (linkWaitingStatuses
		// matches it when the send is recorded).
		var matched bool
		if err := tx.QueryRowContext(ctx, `SELECT message_id IS NOT NULL FROM message_statuses WHERE wamid = ? AND status = ?`,
			ev.WAMID, string(ev.Status)).Scan(&matched); err != nil {
			return fmt.Errorf("look up status %s of %s: %w", ev.Status, ev.WAMID, err)
		}
		if matched {
			rep.Duplicates++
			return nil
		}
	} else {
		if rep.ByStatus == nil {
			rep.ByStatus = map[campaign.Delivery]int{}
		}
		rep.ByStatus[ev.Status]++
	}
	id, err := matchStatus(ctx, tx, ev)
	if err != nil {
		return err
	}
	if id == 0 {
		rep.Unmatched++ // kept, and matched if its wamid is recorded later
		return optOutUnmatched(ctx, tx, ev, rules, now)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_statuses SET message_id = ? WHERE wamid = ? AND status = ?`,
		id, ev.WAMID, string(ev.Status)); err != nil {
		return fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	return settleStatus(ctx, tx, id, ev, rules, now, rep)
}

// optOutUnmatched suppresses the recipient of a status no row of ours
// matches when the rules say so and the sending number is one of ours.
func optOutUnmatched(ctx context.Context, tx *Tx, ev campaign.StatusEvent, rules WebhookRules, now time.Time) error {
	phone, reason := rules.OptOut(ev, now)
	if reason == "" {
		return nil
	}
	var ours bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE phone_number_id = ?)`, ev.PhoneNumberID).Scan(&ours); err != nil {
		return fmt.Errorf("look up number %s: %w", ev.PhoneNumberID, err)
	}
	if !ours {
		return nil
	}
	return suppressOptOut(ctx, tx, phone, reason, now)
}

// suppressOptOut puts a number on the suppression list for reason.
func suppressOptOut(ctx context.Context, tx *Tx, phone, reason string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO suppressions (phone, reason, created_at) VALUES (?, ?, ?)`,
		phone, reason, now.UnixNano()); err != nil {
		return fmt.Errorf("suppress %s: %w", phone, err)
	}
	return nil
}

// matchStatus finds the row a status is about: by wamid, else by the
// callback data wasend set on the send ("wasend:cC:mM"), which also finds
// rows whose answer never reached the database. 0: not a message of ours.
func matchStatus(ctx context.Context, tx *Tx, ev campaign.StatusEvent) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM messages WHERE wamid = ?`, ev.WAMID).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	cid, mid, ok := campaign.ParseCallbackData(ev.CallbackData)
	if !ok {
		return 0, nil
	}
	var phone string
	err = tx.QueryRowContext(ctx, `SELECT id, phone FROM messages WHERE id = ? AND campaign_id = ?`, mid, cid).Scan(&id, &phone)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	// Another database sending from the same business account numbers
	// its rows the same way: the recipient must be the row's too.
	if ev.Recipient != "" && strings.TrimPrefix(phone, "+") != ev.Recipient {
		return 0, nil
	}
	return id, nil
}

// settleStatus reads the facts of message id that a kept status's meaning
// depends on, asks the rules what the status does, and makes that move
// and its effects. A status whose row is gone changes nothing.
func settleStatus(ctx context.Context, tx *Tx, id int64, ev campaign.StatusEvent, rules WebhookRules, now time.Time, rep *campaign.ApplyReport) error {
	var (
		r               campaign.StatusRow
		wamid, delivery sql.NullString
		accountID       sql.NullInt64
		phone           string
	)
	err := tx.QueryRowContext(ctx, `SELECT m.state, m.wamid, m.delivery, m.campaign_id, c.cancelled_at IS NOT NULL, m.account_id, m.phone,
		EXISTS (SELECT 1 FROM message_statuses WHERE wamid = ? AND status = `+quote(campaign.DeliveryFailed)+`)
		FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.id = ?`, ev.WAMID, id).
		Scan(&r.State, &wamid, &delivery, &r.CampaignID, &r.Cancelled, &accountID, &phone, &r.WAMIDFailed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read message %d: %w", id, err)
	}
	r.WAMID, r.Delivery, r.AccountID = wamid.String, campaign.Delivery(delivery.String), accountID.Int64
	a := rules.Settle(r, ev, now)
	if a.Move == campaign.StatusWait {
		rep.Deferred++
		return markDeferred(ctx, tx, ev, false)
	}
	if a.Adopt {
		ok, err := adoptSend(ctx, tx, id, ev, now)
		if err != nil || !ok {
			return err
		}
		rep.Adopted++
		// The wamid's other statuses that came without callback data.
		if err := linkWaitingStatuses(ctx, tx, []any{ev.WAMID}); err != nil {
			return err
		}
	}
	if a.NotResent {
		rep.NotResent++
	}
	switch a.Move {
	case campaign.StatusAdvance:
		ok, err := advanceDelivery(ctx, tx, id, ev)
		if ok {
			rep.Advanced++
		}
		return err
	case campaign.StatusReschedule:
		ok, err := rescheduleAfterFailure(ctx, tx, id, ev, a.RetryAt, a.Error, now)
		if err != nil || !ok {
			return err
		}
		rep.Rescheduled++
	case campaign.StatusFail:
		ok, err := failAfterSend(ctx, tx, id, ev, a.Error, now)
		if err != nil || !ok {
			return err
		}
		rep.Failed++
	}
	return asyncEffects(ctx, tx, r.CampaignID, accountID.Int64, phone, ev, a, now)
}

// markDeferred sets whether a kept status still waits for its row.
func markDeferred(ctx context.Context, tx *Tx, ev campaign.StatusEvent, applied bool) error {
	_, err := tx.ExecContext(ctx, `UPDATE message_statuses SET applied = ? WHERE wamid = ? AND status = ?`,
		applied, ev.WAMID, string(ev.Status))
	if err != nil {
		return fmt.Errorf("defer status of %s: %w", ev.WAMID, err)
	}
	return nil
}

// adoptSend: unknown (or requeued, never answered) → sent, with the
// webhook's wamid as the proof.
func adoptSend(ctx context.Context, tx *Tx, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, adoptSendSQL,
		ev.WAMID, nanos(ev.At), now.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("adopt send of message %d: %w", id, err)
	}
	k, _ := res.RowsAffected()
	return k > 0, nil
}

// advanceDeliverySQL moves a sent row's delivery up the ladder
// (campaign.DeliveryLadder) to the status given, never down, and never off
// failed; a received status sets delivered_at, a read read_at.
var advanceDeliverySQL = `UPDATE messages SET
		delivery = CASE WHEN ` + deliveryRankSQL("delivery") + ` < ` + deliveryRankSQL("?1") + ` THEN ?1 ELSE delivery END,
		delivered_at = CASE WHEN ?2 THEN min(coalesce(delivered_at, ?4), ?4) ELSE delivered_at END,
		read_at = CASE WHEN ?3 THEN min(coalesce(read_at, ?4), ?4) ELSE read_at END
		WHERE id = ?5 AND state = ` + quote(campaign.Sent) + ` AND wamid = ?6 AND NOT ` + deliveryIsSQL("delivery", campaign.DeliveryFailed)

// advanceDelivery: delivery moves forward to ev's status on a sent row
// carrying ev's wamid. The timestamps are the earliest webhook times, so
// arrival order does not matter; a read sets delivered_at too.
func advanceDelivery(ctx context.Context, tx *Tx, id int64, ev campaign.StatusEvent) (bool, error) {
	res, err := tx.ExecContext(ctx, advanceDeliverySQL, string(ev.Status),
		ev.Status.Rank() >= campaign.DeliveryDelivered.Rank(), ev.Status == campaign.DeliveryRead,
		nanos(ev.At), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("advance delivery of message %d: %w", id, err)
	}
	k, _ := res.RowsAffected()
	return k > 0, nil
}

// failAfterSend: sent → failed with error why, by an asynchronous failure.
func failAfterSend(ctx context.Context, tx *Tx, id int64, ev campaign.StatusEvent, why string, now time.Time) (bool, error) {
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
func rescheduleAfterFailure(ctx context.Context, tx *Tx, id int64, ev campaign.StatusEvent, retryAt time.Time, why string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, rescheduleUndeliveredSQL,
		nanos(retryAt), ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	k, _ := res.RowsAffected()
	if k == 0 {
		return false, nil
	}
	var cid int64
	if err := tx.QueryRowContext(ctx, `SELECT campaign_id FROM messages WHERE id = ?`, id).Scan(&cid); err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	return true, reopen(ctx, tx, cid, k)
}

// asyncEffects carries out what an asynchronous failure means beyond its
// row (campaign cid, account aid, phone), as applyEffects does for a
// synchronous answer.
func asyncEffects(ctx context.Context, tx *Tx, cid, aid int64, phone string, ev campaign.StatusEvent, a campaign.StatusAction, now time.Time) error {
	if a.Suppress != "" {
		if err := suppressOptOut(ctx, tx, phone, a.Suppress, now); err != nil {
			return err
		}
	}
	if a.Pause != "" {
		if err := reopenCampaign(ctx, tx, cid); err != nil {
			return err
		}
		if err := pauseCampaign(ctx, tx, cid, a.Pause); err != nil {
			return err
		}
	}
	if !a.RestrictUntil.IsZero() {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET cooldown_until = max(cooldown_until, ?), restriction = ?,
			last_error_code = ? WHERE id = ?`, a.RestrictUntil.UnixNano(), a.Error, ev.ErrorCode, aid); err != nil {
			return fmt.Errorf("restrict account %d: %w", aid, err)
		}
	}
	if a.DropAccount {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO campaign_accounts (campaign_id, account_id, reason, error_code, at)
			VALUES (?, ?, ?, ?, ?)`, cid, aid, a.Error, ev.ErrorCode, now.UnixNano()); err != nil {
			return fmt.Errorf("drop account %d from campaign %d: %w", aid, cid, err)
		}
	}
	return nil
}

// linkWaitingStatuses matches the statuses kept unmatched for the given
// wamids (their webhook came before the send's answer was recorded, without
// callback data) to the rows that carry them now, and marks them waiting:
// the applier's next pass settles them (settleDeferred). It runs in the
// transaction that records the wamids, so no status is left behind; a
// status matched once is never linked again. Padding ("") matches nothing.
// The unary + keeps SQLite on the wamid key: statuses of other senders'
// messages stay unmatched for ever, and must not be scanned per send.
func linkWaitingStatuses(ctx context.Context, tx *Tx, wamids []any) error {
	for len(wamids) > 0 {
		n := min(len(wamids), maxSentBatch)
		size := padded(n)
		args := append(make([]any, 0, size), wamids[:n]...)
		for len(args) < size {
			args = append(args, "")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE message_statuses SET message_id = m.id, applied = 0
			FROM messages m WHERE +message_statuses.message_id IS NULL AND message_statuses.wamid IN (`+repeated(size, "?")+`)
			AND m.wamid = message_statuses.wamid`, args...); err != nil {
			return fmt.Errorf("match statuses that came before their send was recorded: %w", err)
		}
		wamids = wamids[n:]
	}
	return nil
}

// settleDeferred applies kept statuses whose row was in flight when they
// came and has been recorded since (or recovered as unknown).
func settleDeferred(ctx context.Context, tx *Tx, rules WebhookRules, now time.Time, max int, rep *campaign.ApplyReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.message_id, s.wamid, s.status, s.at, s.recipient, s.callback_data,
		coalesce(s.error_code, 0), coalesce(s.error_title, ''), s.pricing
		FROM message_statuses s JOIN messages m ON m.id = s.message_id
		WHERE s.applied = 0 AND m.state != 'sending' ORDER BY s.at LIMIT ?`, max)
	if err != nil {
		return fmt.Errorf("read deferred statuses: %w", err)
	}
	type deferred struct {
		id int64
		ev campaign.StatusEvent
	}
	var ds []deferred
	for rows.Next() {
		var (
			d  deferred
			at int64
		)
		if err := rows.Scan(&d.id, &d.ev.WAMID, &d.ev.Status, &at, &d.ev.Recipient, &d.ev.CallbackData,
			&d.ev.ErrorCode, &d.ev.ErrorTitle, &d.ev.Pricing); err != nil {
			rows.Close()
			return fmt.Errorf("read deferred statuses: %w", err)
		}
		d.ev.At = fromNanos(at)
		ds = append(ds, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read deferred statuses: %w", err)
	}
	// Failures last: a status that moves a row forward must not find it
	// already rescheduled by its own message's failure.
	for pass := 0; pass < 2; pass++ {
		for _, d := range ds {
			if (d.ev.Status == campaign.DeliveryFailed) != (pass == 1) {
				continue
			}
			if err := markDeferred(ctx, tx, d.ev, true); err != nil {
				return err
			}
			if err := settleStatus(ctx, tx, d.id, d.ev, rules, now, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

// pauseTemplateCampaigns: running campaigns sending the template → paused
// with reason why.
func pauseTemplateCampaigns(ctx context.Context, tx *Tx, ev campaign.TemplateEvent, why string) (int, error) {
	res, err := tx.ExecContext(ctx, pauseTemplateSQL, why, ev.Template, ev.Lang, ev.Lang)
	if err != nil {
		return 0, fmt.Errorf("pause campaigns of template %s: %w", ev.Template, err)
	}
	k, _ := res.RowsAffected()
	return int(k), nil
}

// restrictAccount: the accounts of the number an account event names stop
// until the given time, with reason why.
func restrictAccount(ctx context.Context, tx *Tx, ev campaign.AccountEvent, why string, until time.Time) (int, error) {
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
