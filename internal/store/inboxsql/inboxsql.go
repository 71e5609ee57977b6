// Package inboxsql is the webhook applier's statements that take one row
// at a time — keep a status, find its row, read what its meaning depends
// on, the moves a status makes on its row, and the effects of statuses and
// events on accounts and campaigns — written once for both drivers of the
// store, as recordsql writes the record path. Which move a status makes
// is internal/webhook's; each statement here decides nothing, and names
// the states it may start from so that a move that no longer applies (a
// duplicate, a late status, a row another process changed) changes
// nothing. A driver's driver.InboxTx embeds Moves and adds the statements
// it writes its own way: the inbox's bodies, the bulk forms (SQLite pads
// a VALUES list, Postgres pipelines arrays) and the savepoints.
package inboxsql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/store/statesql"
)

// Moves are the statements of this package on one driver's transaction.
type Moves struct {
	Q managesql.Tx
	D dialect.Dialect
}

// NoteNumber keeps which phone number id a display number is.
func (m Moves) NoteNumber(ctx context.Context, display, id string, now time.Time) error {
	if _, err := m.Q.Exec(ctx, byDialect[m.D].noteNumber, display, id, now.UnixNano()); err != nil {
		return fmt.Errorf("note number %s: %w", display, err)
	}
	return nil
}

// KeepStatus keeps a status once per wamid and rung (message_statuses):
// kept is false when it was kept before, matched then whether it was
// matched to its row.
func (m Moves) KeepStatus(ctx context.Context, ev campaign.StatusEvent, now time.Time) (kept, matched bool, err error) {
	q := &byDialect[m.D]
	n, err := m.Q.Exec(ctx, q.keepStatus, StatusArgs(ev, now, 0)...)
	if err != nil {
		return false, false, fmt.Errorf("keep status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	if n > 0 {
		return true, false, nil
	}
	if _, err := m.Q.Row(ctx, q.statusMatched, []any{ev.WAMID, string(ev.Status)}, &matched); err != nil {
		return false, false, fmt.Errorf("look up status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	return false, matched, nil
}

// KeepStatusSQL is the insert that keeps a status given by StatusArgs, in
// d's placeholders: a driver's bulk form repeats it.
func KeepStatusSQL(d dialect.Dialect) string { return byDialect[d].keepStatus }

// StatusArgs are KeepStatusSQL's values for ev received at now, matched to
// row id (0: not matched yet). A NotBillable status keeps billable 0, any
// other NULL.
func StatusArgs(ev campaign.StatusEvent, now time.Time, id int64) []any {
	var code, title, billable, row any
	if ev.ErrorCode != 0 {
		code, title = int64(ev.ErrorCode), ev.ErrorTitle
	}
	if ev.NotBillable {
		billable = int64(0)
	}
	if id != 0 {
		row = id
	}
	return []any{ev.WAMID, string(ev.Status), rowscan.Nanos(ev.At), ev.Recipient, ev.CallbackData, code, title,
		ev.Pricing, ev.PricingType, ev.PricingModel, billable, now.UnixNano(), row}
}

// OurNumber reports whether an account sends from the phone number id.
func (m Moves) OurNumber(ctx context.Context, phoneNumberID string) (bool, error) {
	var ours bool
	if _, err := m.Q.Row(ctx, byDialect[m.D].ourNumber, []any{phoneNumberID}, &ours); err != nil {
		return false, fmt.Errorf("look up number %s: %w", phoneNumberID, err)
	}
	return ours, nil
}

// Suppress puts a number on the suppression list for reason.
func (m Moves) Suppress(ctx context.Context, phone, reason string, now time.Time) error {
	if _, err := m.Q.Exec(ctx, byDialect[m.D].suppress, phone, reason, now.UnixNano()); err != nil {
		return fmt.Errorf("suppress %s: %w", phone, err)
	}
	return nil
}

// WAMIDRowSQL is the row carrying the wamid ?1, else the row its kept
// statuses were matched to (a 131049 that put the row back cleared its
// wamid), as an expression in d's placeholders.
func WAMIDRowSQL(d dialect.Dialect) string { return byDialect[d].wamidRow }

// WAMIDRow is the row carrying wamid, else the row its kept statuses
// were matched to (WAMIDRowSQL); 0: none.
func (m Moves) WAMIDRow(ctx context.Context, wamid string) (int64, error) {
	var id sql.NullInt64
	if _, err := m.Q.Row(ctx, `SELECT `+byDialect[m.D].wamidRow, []any{wamid}, &id); err != nil {
		return 0, fmt.Errorf("find the row of %s: %w", wamid, err)
	}
	return id.Int64, nil
}

// RowPhone is the phone of message id when it is campaign campaignID's.
func (m Moves) RowPhone(ctx context.Context, campaignID, id int64) (phone string, ok bool, err error) {
	if ok, err = m.Q.Row(ctx, byDialect[m.D].rowPhone, []any{id, campaignID}, &phone); err != nil {
		return "", false, fmt.Errorf("read message %d: %w", id, err)
	}
	return phone, ok, nil
}

// LinkStatus matches a kept status to row id.
func (m Moves) LinkStatus(ctx context.Context, id int64, ev campaign.StatusEvent) error {
	if _, err := m.Q.Exec(ctx, byDialect[m.D].linkStatus, id, ev.WAMID, string(ev.Status)); err != nil {
		return fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	return nil
}

// StatusRow reads the facts of message id that a kept status's meaning
// depends on, and the row's phone (ok false: the row is gone).
func (m Moves) StatusRow(ctx context.Context, id int64, ev campaign.StatusEvent) (r campaign.StatusRow, phone string, ok bool, err error) {
	var (
		wamid, delivery sql.NullString
		accountID       sql.NullInt64
	)
	ok, err = m.Q.Row(ctx, byDialect[m.D].statusRow, []any{ev.WAMID, id},
		&r.State, &wamid, &delivery, &r.CampaignID, &r.Cancelled, &accountID, &phone, &r.WAMIDFailed)
	if err != nil {
		return r, "", false, fmt.Errorf("read message %d: %w", id, err)
	}
	r.WAMID, r.Delivery, r.AccountID = wamid.String, campaign.Delivery(delivery.String), accountID.Int64
	return r, phone, ok, nil
}

// Defer sets whether a kept status still waits for its row (applied is
// the opposite of wait).
func (m Moves) Defer(ctx context.Context, ev campaign.StatusEvent, wait bool) error {
	applied := 1
	if wait {
		applied = 0
	}
	if _, err := m.Q.Exec(ctx, byDialect[m.D].deferStatus, applied, ev.WAMID, string(ev.Status)); err != nil {
		return fmt.Errorf("defer status of %s: %w", ev.WAMID, err)
	}
	return nil
}

// Adopt moves a row unknown (or requeued, never answered) to sent, with
// the webhook's wamid as the proof; false when it was in neither state. A
// driver's AdoptSend links the wamid's other statuses kept unmatched too.
func (m Moves) Adopt(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	q := &byDialect[m.D]
	n, err := m.Q.Exec(ctx, q.adoptSend, ev.WAMID, rowscan.Nanos(ev.At), now.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("adopt send of message %d: %w", id, err)
	}
	if n == 0 {
		return false, nil
	}
	// Its claim's attempt does not say sent: the send log keeps it (the
	// sticky sender, claimsql.LogClaims).
	if _, err := m.Q.Exec(ctx, q.logAdopted, rowscan.Nanos(ev.At), id); err != nil {
		return false, fmt.Errorf("log the send of message %d: %w", id, err)
	}
	return true, nil
}

// FailAfterSend moves a sent row to failed with error why, by an
// asynchronous failure of the request the wamid names.
func (m Moves) FailAfterSend(ctx context.Context, id int64, ev campaign.StatusEvent, why string, now time.Time) (bool, error) {
	n, err := m.Q.Exec(ctx, byDialect[m.D].failAfterSend, ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("fail message %d after send: %w", id, err)
	}
	return n > 0, nil
}

// RescheduleAfterFailure moves a sent row back to pending, not before
// retryAt, with error why: the failed wamid dropped (its statuses stay
// kept), the campaign reopened.
func (m Moves) RescheduleAfterFailure(ctx context.Context, id int64, ev campaign.StatusEvent, retryAt time.Time, why string,
	now time.Time) (bool, error) {
	var cid int64
	found, err := m.Q.Row(ctx, byDialect[m.D].reschedule, []any{rowscan.Nanos(retryAt), ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID}, &cid)
	if err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	if !found {
		return false, nil
	}
	return true, managesql.Reopen(ctx, m.Q, m.D, cid, 1) // one row: by id
}

// PauseCampaign pauses campaign id for why, reopened first if it finished.
func (m Moves) PauseCampaign(ctx context.Context, id int64, why string) error {
	if err := managesql.ReopenCampaign(ctx, m.Q, m.D, id); err != nil {
		return err
	}
	return managesql.PauseCampaign(ctx, m.Q, m.D, id, why)
}

// RestrictAccount stops account id until the given time.
func (m Moves) RestrictAccount(ctx context.Context, id int64, until time.Time, why string, code int) error {
	if _, err := m.Q.Exec(ctx, byDialect[m.D].restrict, until.UnixNano(), why, code, id); err != nil {
		return fmt.Errorf("restrict account %d: %w", id, err)
	}
	return nil
}

// DropAccount stops an account for one campaign (managesql.DropAccount).
func (m Moves) DropAccount(ctx context.Context, campaignID, accountID int64, why string, code int, now time.Time) error {
	return managesql.DropAccount(ctx, m.Q, m.D, campaignID, accountID, why, code, now)
}

// PauseTemplate pauses the running campaigns that send the template.
func (m Moves) PauseTemplate(ctx context.Context, ev campaign.TemplateEvent, why string) (int, error) {
	return managesql.PauseTemplate(ctx, m.Q, m.D, ev, why)
}

// NumberOf is the phone number id an account event names, filled in from
// the display number a status webhook named ("" when none did yet).
func (m Moves) NumberOf(ctx context.Context, ev campaign.AccountEvent) (string, error) {
	if ev.PhoneNumberID != "" || ev.DisplayNumber == "" {
		return ev.PhoneNumberID, nil
	}
	var id string
	if _, err := m.Q.Row(ctx, byDialect[m.D].numberOf, []any{strings.TrimPrefix(ev.DisplayNumber, "+")}, &id); err != nil {
		return "", fmt.Errorf("look up number %s: %w", ev.DisplayNumber, err)
	}
	return id, nil
}

// StopNumber stops the accounts of the number an account event names until
// the given time, with reason why, and says how many.
func (m Moves) StopNumber(ctx context.Context, ev campaign.AccountEvent, why string, until time.Time) (int, error) {
	pnid, err := m.NumberOf(ctx, ev)
	if err != nil || pnid == "" {
		return 0, err // "": a number no status webhook named yet
	}
	n, err := m.Q.Exec(ctx, byDialect[m.D].stopNumber, until.UnixNano(), why, pnid)
	if err != nil {
		return 0, fmt.Errorf("stop account of number %s: %w", pnid, err)
	}
	return int(n), nil
}

// AccountOf is the account that sends from the phone number id (0: none).
func (m Moves) AccountOf(ctx context.Context, phoneNumberID string) (int64, error) {
	var account int64
	if _, err := m.Q.Row(ctx, byDialect[m.D].accountOf, []any{phoneNumberID}, &account); err != nil {
		return 0, fmt.Errorf("look up number %s: %w", phoneNumberID, err)
	}
	return account, nil
}

// ContextRow is the message an inbound message's context.id names,
// whatever became of it since, found as a status finds its row
// (WAMIDRowSQL), when it was sent to phone.
func (m Moves) ContextRow(ctx context.Context, wamid, phone string) (r campaign.RepliedRow, ok bool, err error) {
	ok, err = m.Q.Row(ctx, byDialect[m.D].contextRow, []any{wamid, phone}, &r.ID, &r.CampaignID, &r.AccountID)
	if err != nil {
		return r, false, fmt.Errorf("find the message %s answers: %w", phone, err)
	}
	return r, ok, nil
}

// LinkInbound links an inbound message to the row it answers (none: 0),
// waiting no longer.
func (m Moves) LinkInbound(ctx context.Context, id string, r campaign.RepliedRow) error {
	var row any
	if r.ID != 0 {
		row = r.ID
	}
	if _, err := m.Q.Exec(ctx, byDialect[m.D].linkInbound, row, id); err != nil {
		return fmt.Errorf("link inbound message %s: %w", id, err)
	}
	return nil
}

// NoteReply records a row's first reply (the earliest, whatever order the
// webhooks came in) and counts the row as replied once; first says this
// was its first.
func (m Moves) NoteReply(ctx context.Context, r campaign.RepliedRow, at time.Time, text string) (first bool, err error) {
	q := &byDialect[m.D]
	n, err := m.Q.Exec(ctx, q.firstReply, rowscan.Nanos(at), text, r.ID)
	if err == nil && n == 0 {
		_, err = m.Q.Exec(ctx, q.earlierReply, rowscan.Nanos(at), text, r.ID)
	}
	if err != nil {
		return false, fmt.Errorf("note the reply to message %d: %w", r.ID, err)
	}
	if n == 0 {
		return false, nil
	}
	return true, m.countReply(ctx, r, q.countReplied)
}

// NoteOptOut marks a row whose recipient opted out by answering it, once.
func (m Moves) NoteOptOut(ctx context.Context, r campaign.RepliedRow, at time.Time) error {
	q := &byDialect[m.D]
	n, err := m.Q.Exec(ctx, q.optOut, rowscan.Nanos(at), r.ID)
	if err != nil {
		return fmt.Errorf("note the opt-out of message %d: %w", r.ID, err)
	}
	if n == 0 {
		return nil
	}
	return m.countReply(ctx, r, q.countOptedOut)
}

func (m Moves) countReply(ctx context.Context, r campaign.RepliedRow, query string) error {
	if _, err := m.Q.Exec(ctx, query, r.CampaignID, r.AccountID); err != nil {
		return fmt.Errorf("count the reply to message %d: %w", r.ID, err)
	}
	return nil
}

// InboundSender is the recipient key an inbound message is filed under:
// its sender's number; for a sender known only by a user id, the number
// linked to it, or else the id itself (the key of rows sent to it).
func (m Moves) InboundSender(ctx context.Context, in campaign.InboundMessage) (key string, err error) {
	switch {
	case in.From != "":
		return "+" + strings.TrimPrefix(in.From, "+"), nil
	case in.UserID == "":
		return "", nil
	}
	if _, err := m.Q.Row(ctx, byDialect[m.D].linkedNumber, []any{in.UserID}, &key); err != nil {
		return "", fmt.Errorf("find the number of %s: %w", in.UserID, err)
	}
	return key, nil
}

// statements are this package's SQL in one dialect.
type statements struct {
	noteNumber, keepStatus, statusMatched, ourNumber, suppress string
	wamidRow, rowPhone, linkStatus, statusRow, deferStatus     string
	adoptSend, logAdopted, failAfterSend, reschedule           string
	restrict, numberOf, stopNumber                             string
	accountOf, contextRow, linkInbound, linkedNumber           string
	firstReply, earlierReply, optOut                           string
	countReplied, countOptedOut                                string
}

var byDialect = dialect.Both(build)

// build writes the statements for d. The status webhooks' moves are built
// from campaign.Transitions: wamid guards tie each to the request the
// webhook speaks of, and none fails or sends again a message the person
// has (statesql.Received, from campaign.DeliveryLadder).
func build(d dialect.Dialect) statements {
	b := d.Bind
	wamidRow := `coalesce((SELECT id FROM messages WHERE wamid = ?1 LIMIT 1),
			(SELECT message_id FROM message_statuses WHERE wamid = ?1 AND message_id IS NOT NULL LIMIT 1))`
	countReply := func(column string) string {
		return b(`INSERT INTO reply_counts (campaign_id, account_id, ` + column + `) VALUES (?1, ?2, 1)
			ON CONFLICT (campaign_id, account_id) DO UPDATE SET ` + column + ` = reply_counts.` + column + ` + 1`)
	}
	return statements{
		noteNumber: b(`INSERT INTO webhook_numbers (display_number, phone_number_id, seen_at) VALUES (?1, ?2, ?3)
			ON CONFLICT (display_number) DO UPDATE SET phone_number_id = excluded.phone_number_id, seen_at = excluded.seen_at`),
		keepStatus: b(`INSERT INTO message_statuses (wamid, status, at, recipient, callback_data, error_code, error_title,
			pricing, pricing_type, pricing_model, billable, received_at, message_id)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (wamid, status) DO NOTHING`),
		statusMatched: b(`SELECT message_id IS NOT NULL FROM message_statuses WHERE wamid = ?1 AND status = ?2`),
		ourNumber:     b(`SELECT EXISTS (SELECT 1 FROM accounts WHERE phone_number_id = ?1)`),
		suppress:      b(`INSERT INTO suppressions (phone, reason, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (phone) DO NOTHING`),

		wamidRow:   b(wamidRow),
		rowPhone:   b(`SELECT phone FROM messages WHERE id = ?1 AND campaign_id = ?2`),
		linkStatus: b(`UPDATE message_statuses SET message_id = ?1 WHERE wamid = ?2 AND status = ?3`),
		statusRow: b(`SELECT m.state, m.wamid, m.delivery, m.campaign_id, c.cancelled_at IS NOT NULL, m.account_id, m.phone,
			EXISTS (SELECT 1 FROM message_statuses WHERE wamid = ?1 AND status = ` + statesql.Quote(campaign.DeliveryFailed) + `)
			FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.id = ?2`),
		deferStatus: b(`UPDATE message_statuses SET applied = ?1 WHERE wamid = ?2 AND status = ?3`),

		adoptSend: b(`UPDATE messages SET ` + statesql.To(campaign.MoveAdoptSend) + `, wamid = ?1, sent_at = ?2, updated_at = ?3,
			error_code = NULL, error_message = NULL, runner_id = NULL
			WHERE id = ?4 AND ` + statesql.From(campaign.MoveAdoptSend, "state") + ` AND wamid IS NULL`),
		logAdopted: b(`UPDATE contact_log SET sent_at = ` + d.Greatest("sent_at", "?1") + `
			WHERE phone = (SELECT phone FROM messages WHERE id = ?2) AND account_id = (SELECT account_id FROM messages WHERE id = ?2)`),
		failAfterSend: b(`UPDATE messages SET ` + statesql.To(campaign.MoveFailAfterSend) + `, delivery = ` +
			statesql.Quote(campaign.DeliveryFailed) + `, failed_after_send = 1, error_code = ?1, error_message = ?2, updated_at = ?3
			WHERE id = ?4 AND ` + statesql.From(campaign.MoveFailAfterSend, "state") + ` AND wamid = ?5
			AND NOT ` + statesql.Received("delivery")),
		reschedule: b(`UPDATE messages SET ` + statesql.To(campaign.MoveRescheduleUndelivered) + `, next_attempt_at = ?1, wamid = NULL,
			delivery = NULL, delivered_at = NULL, read_at = NULL, runner_id = NULL, error_code = ?2, error_message = ?3, updated_at = ?4
			WHERE id = ?5 AND ` + statesql.From(campaign.MoveRescheduleUndelivered, "state") + ` AND wamid = ?6
			AND NOT ` + statesql.Received("delivery") + ` RETURNING campaign_id`),

		restrict: b(`UPDATE accounts SET cooldown_until = ` + d.Greatest("cooldown_until", "?1") + `, restriction = ?2,
			last_error_code = ?3 WHERE id = ?4`),
		accountOf: b(`SELECT id FROM accounts WHERE phone_number_id = ?1 ORDER BY id LIMIT 1`),
		contextRow: b(`SELECT id, campaign_id, coalesce(account_id, 0) FROM messages WHERE id = ` + wamidRow +
			` AND phone = ?2`),
		linkInbound:  b(`UPDATE inbound_messages SET link_wait = 0, message_id = ?1 WHERE id = ?2`),
		linkedNumber: b(`SELECT coalesce((SELECT phone FROM recipient_links WHERE user_id = ?1), ?1)`),
		firstReply: b(`UPDATE messages SET first_reply_at = ?1, first_reply_text = ?2
			WHERE id = ?3 AND first_reply_at IS NULL`),
		earlierReply: b(`UPDATE messages SET first_reply_at = ?1, first_reply_text = ?2
			WHERE id = ?3 AND first_reply_at > ?1`),
		optOut:        b(`UPDATE messages SET opted_out_at = ?1 WHERE id = ?2 AND opted_out_at IS NULL`),
		countReplied:  countReply("replied"),
		countOptedOut: countReply("opted_out"),
		numberOf:      b(`SELECT phone_number_id FROM webhook_numbers WHERE display_number = ?1`),
		stopNumber: b(`UPDATE accounts SET cooldown_until = ` + d.Greatest("cooldown_until", "?1") + `, restriction = ?2
			WHERE phone_number_id = ?3`),
	}
}
