package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/statesql"
)

// The webhook inbox on Postgres: bodies stored first (any host's receiver),
// applied later by any host's drain over InboxTx, each move one statement
// whose WHERE names the states it may start from, as on SQLite
// (webhook.go there). Which move a body makes is internal/webhook's.

// AddToInbox stores webhook bodies exactly as received, in one transaction
// (one statement), in the order given.
func (s *Store) AddToInbox(ctx context.Context, bodies [][]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	now := s.now().UnixNano()
	return s.inTx(ctx, func(tx pgx.Tx) error {
		// One statement for the commit's bodies; ids follow their order.
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_inbox (received_at, body)
			SELECT $1, b FROM unnest($2::bytea[]) WITH ORDINALITY AS t(b, i) ORDER BY i`, now, bodies); err != nil {
			return fmt.Errorf("store %d webhook bodies: %w", len(bodies), err)
		}
		return nil
	})
}

// WithInbox runs the applier in one transaction at the store's clock. It
// takes the claim lock first: drains on several hosts go one at a time, so
// a body is applied exactly once, and none runs between a send's record
// and the linking of the statuses that came before it (SQLite's single
// writer gives both).
func (s *Store) WithInbox(ctx context.Context, fn func(tx driver.InboxTx, now time.Time) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(claimLock)); err != nil {
			return fmt.Errorf("lock the inbox: %w", err)
		}
		return fn(inboxTx{tx}, s.now())
	})
}

// inboxTx is driver.InboxTx on Postgres.
type inboxTx struct{ pgx.Tx }

var _ driver.InboxTx = inboxTx{}

func (tx inboxTx) Bodies(ctx context.Context, max int) ([]driver.InboxBody, error) {
	rows, err := tx.Query(ctx, `SELECT id, body FROM webhook_inbox WHERE applied_at IS NULL ORDER BY id LIMIT $1`, max)
	if err != nil {
		return nil, fmt.Errorf("read webhook inbox: %w", err)
	}
	batch, err := pgx.CollectRows(rows, pgx.RowToStructByPos[driver.InboxBody])
	if err != nil {
		return nil, fmt.Errorf("read webhook inbox: %w", err)
	}
	return batch, nil
}

func (tx inboxTx) Applied(ctx context.Context, ids []int64, why string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE webhook_inbox SET applied_at = $1, error = $2 WHERE id = ANY($3)`,
		now.UnixNano(), nullText(why), ids); err != nil {
		return fmt.Errorf("mark %d webhook bodies applied: %w", len(ids), err)
	}
	return nil
}

// nullText is s, or NULL when empty.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (tx inboxTx) NoteNumber(ctx context.Context, display, id string, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_numbers (display_number, phone_number_id, seen_at) VALUES ($1, $2, $3)
		ON CONFLICT (display_number) DO UPDATE SET phone_number_id = excluded.phone_number_id, seen_at = excluded.seen_at`,
		display, id, now.UnixNano()); err != nil {
		return fmt.Errorf("note number %s: %w", display, err)
	}
	return nil
}

func (tx inboxTx) Part(ctx context.Context, apply func() error) (skip, err error) {
	return store.SavepointPart(func(q string) error { _, err := tx.Exec(ctx, q); return err }, apply, tx.fault)
}

// fault reports whether err is the database failing (its connection, its
// resources, a deadlock or serialization failure to run again) rather than
// one move that cannot apply (a constraint, a value, a refused move).
func (tx inboxTx) fault(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || tx.Conn().IsClosed() {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "08", "40", "53", "54", "57", "58", "XX": // connection, rollback, resources, limits, operator, system, internal
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err)
}

// keepStatusSQL keeps a status once per wamid and rung, with its row when
// known ($13; NULL: not matched yet): the values of statusArgs.
const keepStatusSQL = `INSERT INTO message_statuses (wamid, status, at, recipient, callback_data,
	error_code, error_title, pricing, pricing_type, pricing_model, billable, received_at, message_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (wamid, status) DO NOTHING`

// statusArgs are keepStatusSQL's first twelve values for ev, received at now.
func statusArgs(ev campaign.StatusEvent, now time.Time) []any {
	var code *int64
	var title *string
	if ev.ErrorCode != 0 {
		c := int64(ev.ErrorCode)
		code, title = &c, &ev.ErrorTitle
	}
	var billable *int64
	if ev.NotBillable {
		billable = new(int64)
	}
	return []any{ev.WAMID, string(ev.Status), nanos(ev.At), ev.Recipient, ev.CallbackData, code, title, ev.Pricing,
		ev.PricingType, ev.PricingModel, billable, now.UnixNano()}
}

// KeepStatus: a status is kept once per wamid and rung (message_statuses).
func (tx inboxTx) KeepStatus(ctx context.Context, ev campaign.StatusEvent, now time.Time) (kept, matched bool, err error) {
	tag, err := tx.Exec(ctx, keepStatusSQL, append(statusArgs(ev, now), nil)...)
	if err != nil {
		return false, false, fmt.Errorf("keep status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	if tag.RowsAffected() > 0 {
		return true, false, nil
	}
	if err := tx.QueryRow(ctx, `SELECT message_id IS NOT NULL FROM message_statuses WHERE wamid = $1 AND status = $2`,
		ev.WAMID, string(ev.Status)).Scan(&matched); err != nil {
		return false, false, fmt.Errorf("look up status %s of %s: %w", ev.Status, ev.WAMID, err)
	}
	return false, matched, nil
}

func (tx inboxTx) OurNumber(ctx context.Context, phoneNumberID string) (bool, error) {
	var ours bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM accounts WHERE phone_number_id = $1)`, phoneNumberID).Scan(&ours); err != nil {
		return false, fmt.Errorf("look up number %s: %w", phoneNumberID, err)
	}
	return ours, nil
}

// Suppress puts a number on the suppression list for reason.
func (tx inboxTx) Suppress(ctx context.Context, phone, reason string, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO suppressions (phone, reason, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (phone) DO NOTHING`, phone, reason, now.UnixNano()); err != nil {
		return fmt.Errorf("suppress %s: %w", phone, err)
	}
	return nil
}

// wamidRowSQL: the row carrying wamid $1, else the row its kept statuses
// were matched to (a 131049 that put the row back cleared its wamid).
const wamidRowSQL = `coalesce((SELECT id FROM messages WHERE wamid = $1 LIMIT 1),
	(SELECT message_id FROM message_statuses WHERE wamid = $1 AND message_id IS NOT NULL LIMIT 1))`

// MatchStatus finds the row a status is about: by wamid (wamidRowSQL), else
// by the callback data wasend set on the send, for the same recipient.
func (tx inboxTx) MatchStatus(ctx context.Context, ev campaign.StatusEvent) (int64, error) {
	var id *int64
	if err := tx.QueryRow(ctx, `SELECT `+wamidRowSQL, ev.WAMID).Scan(&id); err != nil {
		return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	if id == nil {
		cid, mid, ok := campaign.ParseCallbackData(ev.CallbackData)
		if !ok {
			return 0, nil
		}
		var phone string
		err := tx.QueryRow(ctx, `SELECT id, phone FROM messages WHERE id = $1 AND campaign_id = $2`, mid, cid).Scan(&id, &phone)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
		}
		// Another database sending from the same business account numbers
		// its rows the same way: the recipient must be the row's too.
		if !campaign.StatusRecipientIs(phone, ev) {
			return 0, nil
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE message_statuses SET message_id = $1 WHERE wamid = $2 AND status = $3`,
		*id, ev.WAMID, string(ev.Status)); err != nil {
		return 0, fmt.Errorf("match status of %s: %w", ev.WAMID, err)
	}
	return *id, nil
}

func (tx inboxTx) StatusRow(ctx context.Context, id int64, ev campaign.StatusEvent) (r campaign.StatusRow, phone string, ok bool, err error) {
	var (
		wamid, delivery *string
		accountID       *int64
	)
	err = tx.QueryRow(ctx, `SELECT m.state, m.wamid, m.delivery, m.campaign_id, c.cancelled_at IS NOT NULL, m.account_id, m.phone,
		EXISTS (SELECT 1 FROM message_statuses WHERE wamid = $1 AND status = `+statesql.Quote(campaign.DeliveryFailed)+`)
		FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.id = $2`, ev.WAMID, id).
		Scan(&r.State, &wamid, &delivery, &r.CampaignID, &r.Cancelled, &accountID, &phone, &r.WAMIDFailed)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, "", false, nil
	}
	if err != nil {
		return r, "", false, fmt.Errorf("read message %d: %w", id, err)
	}
	if wamid != nil {
		r.WAMID = *wamid
	}
	if delivery != nil {
		r.Delivery = campaign.Delivery(*delivery)
	}
	if accountID != nil {
		r.AccountID = *accountID
	}
	return r, phone, true, nil
}

// Defer: applied is the opposite of wait.
func (tx inboxTx) Defer(ctx context.Context, ev campaign.StatusEvent, wait bool) error {
	if _, err := tx.Exec(ctx, `UPDATE message_statuses SET applied = $1 WHERE wamid = $2 AND status = $3`,
		boolInt(!wait), ev.WAMID, string(ev.Status)); err != nil {
		return fmt.Errorf("defer status of %s: %w", ev.WAMID, err)
	}
	return nil
}

// The status webhooks' moves, built from campaign.Transitions: wamid
// guards tie each to the request the webhook speaks of, and none fails or
// sends again a message the person has.
var (
	adoptSendSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveAdoptSend) + `, wamid = $1, sent_at = $2, updated_at = $3,
		error_code = NULL, error_message = NULL, runner_id = NULL
		WHERE id = $4 AND ` + statesql.From(campaign.MoveAdoptSend, "state") + ` AND wamid IS NULL`
	failAfterSendSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveFailAfterSend) + `, delivery = ` + statesql.Quote(campaign.DeliveryFailed) + `,
		failed_after_send = 1, error_code = $1, error_message = $2, updated_at = $3
		WHERE id = $4 AND ` + statesql.From(campaign.MoveFailAfterSend, "state") + ` AND wamid = $5 AND NOT ` + statesql.Received("delivery")
	rescheduleUndeliveredSQL = `UPDATE messages SET ` + statesql.To(campaign.MoveRescheduleUndelivered) + `, next_attempt_at = $1, wamid = NULL,
		delivery = NULL, delivered_at = NULL, read_at = NULL, runner_id = NULL, error_code = $2, error_message = $3, updated_at = $4
		WHERE id = $5 AND ` + statesql.From(campaign.MoveRescheduleUndelivered, "state") + ` AND wamid = $6 AND NOT ` + statesql.Received("delivery") + `
		RETURNING campaign_id`
	pauseTemplateSQL = `UPDATE campaigns SET ` + statesql.CampaignTo(campaign.CampaignPause) + `, pause_reason = $1
		WHERE ` + statesql.CampaignFrom(campaign.CampaignPause, "state") + ` AND cancelled_at IS NULL
		AND kind = 'template' AND template = $2 AND ($3 = '' OR lang = $3)`
)

// AdoptSend: unknown (or requeued, never answered) → sent, with the
// webhook's wamid as the proof; the wamid's other statuses kept unmatched
// are linked to the row.
func (tx inboxTx) AdoptSend(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	tag, err := tx.Exec(ctx, adoptSendSQL, ev.WAMID, nanos(ev.At), now.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("adopt send of message %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	b := &pgx.Batch{}
	linkWaitingStatuses(b, []string{ev.WAMID})
	if err := send(ctx, tx.Tx, b); err != nil {
		return false, fmt.Errorf("adopt send of message %d: %w", id, err)
	}
	return true, nil
}

// StatusFacts reads the rows carrying wamids and every kept status of
// those wamids, two statements for the batch (as on SQLite).
func (tx inboxTx) StatusFacts(ctx context.Context, wamids []string) (rows []campaign.StatusRow, kept []campaign.KeptStatus, err error) {
	q, err := tx.Query(ctx, `SELECT m.id, m.wamid, m.state, coalesce(m.delivery, ''), m.campaign_id, c.cancelled_at IS NOT NULL,
		coalesce(m.account_id, 0) FROM messages m JOIN campaigns c ON c.id = m.campaign_id WHERE m.wamid = ANY($1)`, wamids)
	if err == nil {
		rows, err = pgx.CollectRows(q, func(q pgx.CollectableRow) (r campaign.StatusRow, err error) {
			err = q.Scan(&r.ID, &r.WAMID, &r.State, &r.Delivery, &r.CampaignID, &r.Cancelled, &r.AccountID)
			return r, err
		})
	}
	if err == nil {
		q, err = tx.Query(ctx, `SELECT wamid, status, coalesce(message_id, 0) FROM message_statuses WHERE wamid = ANY($1)`, wamids)
	}
	if err == nil {
		kept, err = pgx.CollectRows(q, func(q pgx.CollectableRow) (k campaign.KeptStatus, err error) {
			err = q.Scan(&k.WAMID, &k.Status, &k.MessageID)
			return k, err
		})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the rows and statuses of %d wamids: %w", len(wamids), err)
	}
	return rows, kept, nil
}

// KeepAdvances keeps the statuses matched to their rows (one batch), then
// moves each row up the ladder in one statement over arrays: delivery to a
// higher rung only, its times to earlier ones (0: not said), never off
// failed.
func (tx inboxTx) KeepAdvances(ctx context.Context, kept []driver.MatchedStatus, moves []campaign.DeliveryAdvance, now time.Time) ([]int64, error) {
	b := &pgx.Batch{}
	for _, k := range kept {
		b.Queue(keepStatusSQL, append(statusArgs(k.Ev, now), nullID(k.ID))...)
	}
	if err := send(ctx, tx.Tx, b); err != nil {
		return nil, fmt.Errorf("keep %d statuses: %w", len(kept), err)
	}
	if len(moves) == 0 {
		return nil, nil
	}
	ids, wamids, tos := make([]int64, len(moves)), make([]string, len(moves)), make([]string, len(moves))
	delivered, read := make([]int64, len(moves)), make([]int64, len(moves))
	for i, m := range moves {
		ids[i], wamids[i], tos[i], delivered[i], read[i] = m.ID, m.WAMID, string(m.To), nanos(m.DeliveredAt), nanos(m.ReadAt)
	}
	q, err := tx.Query(ctx, `UPDATE messages SET
		delivery = CASE WHEN `+statesql.DeliveryRank("delivery")+` < `+statesql.DeliveryRank("v.too")+` THEN v.too ELSE delivery END,
		delivered_at = CASE WHEN v.d <> 0 THEN LEAST(coalesce(delivered_at, v.d), v.d) ELSE delivered_at END,
		read_at = CASE WHEN v.r <> 0 THEN LEAST(coalesce(read_at, v.r), v.r) ELSE read_at END
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS v(id, wamid, too, d, r)
		WHERE messages.id = v.id AND messages.state = `+statesql.Quote(campaign.Sent)+` AND messages.wamid = v.wamid
		AND NOT `+statesql.DeliveryIs("messages.delivery", campaign.DeliveryFailed)+`
		RETURNING messages.id`, ids, wamids, tos, delivered, read)
	var moved []int64
	if err == nil {
		moved, err = pgx.CollectRows(q, pgx.RowTo[int64])
	}
	if err != nil {
		return nil, fmt.Errorf("advance the delivery of %d messages: %w", len(moves), err)
	}
	return moved, nil
}

// FailAfterSend: sent → failed with error why, by an asynchronous failure.
func (tx inboxTx) FailAfterSend(ctx context.Context, id int64, ev campaign.StatusEvent, why string, now time.Time) (bool, error) {
	tag, err := tx.Exec(ctx, failAfterSendSQL, ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID)
	if err != nil {
		return false, fmt.Errorf("fail message %d after send: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// RescheduleAfterFailure: sent → pending not before retryAt with error why,
// the failed wamid dropped (its statuses stay kept), the campaign reopened.
func (tx inboxTx) RescheduleAfterFailure(ctx context.Context, id int64, ev campaign.StatusEvent, retryAt time.Time, why string, now time.Time) (bool, error) {
	var cid int64
	err := tx.QueryRow(ctx, rescheduleUndeliveredSQL, nanos(retryAt), ev.ErrorCode, why, now.UnixNano(), id, ev.WAMID).Scan(&cid)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reschedule message %d: %w", id, err)
	}
	return true, reopen(ctx, tx.Tx, cid, 1) // one row: by id
}

// PauseCampaign pauses campaign id for why, reopened first if it finished.
func (tx inboxTx) PauseCampaign(ctx context.Context, id int64, why string) error {
	if _, err := tx.Exec(ctx, reopenCampaignSQL, id); err != nil {
		return fmt.Errorf("reopen campaign %d: %w", id, err)
	}
	if _, err := tx.Exec(ctx, pauseCampaignSQL, why, id); err != nil {
		return fmt.Errorf("pause campaign %d: %w", id, err)
	}
	return nil
}

// RestrictAccount stops account id until the given time.
func (tx inboxTx) RestrictAccount(ctx context.Context, id int64, until time.Time, why string, code int) error {
	if _, err := tx.Exec(ctx, `UPDATE accounts SET cooldown_until = GREATEST(cooldown_until, $1), restriction = $2,
		last_error_code = $3 WHERE id = $4`, until.UnixNano(), why, code, id); err != nil {
		return fmt.Errorf("restrict account %d: %w", id, err)
	}
	return nil
}

func (tx inboxTx) DropAccount(ctx context.Context, campaignID, accountID int64, why string, code int, now time.Time) error {
	return dropAccount(ctx, tx.Tx, campaignID, accountID, why, code, now)
}

// Deferred: in the order of their webhook times (store.DeferredSQL).
func (tx inboxTx) Deferred(ctx context.Context, max int) ([]driver.DeferredStatus, error) {
	rows, err := tx.Query(ctx, store.DeferredSQL+`$1`, max)
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.DeferredStatus, error) {
		return store.ScanDeferred(row)
	})
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	return ds, nil
}

func (tx inboxTx) PauseTemplate(ctx context.Context, ev campaign.TemplateEvent, why string) (int, error) {
	tag, err := tx.Exec(ctx, pauseTemplateSQL, why, ev.Template, ev.Lang)
	if err != nil {
		return 0, fmt.Errorf("pause campaigns of template %s: %w", ev.Template, err)
	}
	return int(tag.RowsAffected()), nil
}

// numberOf fills in an account event's phone number id from the display
// number a status webhook named ("" when none did yet).
func (tx inboxTx) numberOf(ctx context.Context, ev campaign.AccountEvent) (string, error) {
	if ev.PhoneNumberID != "" || ev.DisplayNumber == "" {
		return ev.PhoneNumberID, nil
	}
	var id string
	err := tx.QueryRow(ctx, `SELECT phone_number_id FROM webhook_numbers WHERE display_number = $1`,
		strings.TrimPrefix(ev.DisplayNumber, "+")).Scan(&id)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("look up number %s: %w", ev.DisplayNumber, err)
	}
	return id, nil
}

// StopNumber: the accounts of the number an account event names stop
// until the given time, with reason why.
func (tx inboxTx) StopNumber(ctx context.Context, ev campaign.AccountEvent, why string, until time.Time) (int, error) {
	pnid, err := tx.numberOf(ctx, ev)
	if err != nil || pnid == "" {
		return 0, err
	}
	tag, err := tx.Exec(ctx, `UPDATE accounts SET cooldown_until = GREATEST(cooldown_until, $1), restriction = $2
		WHERE phone_number_id = $3`, until.UnixNano(), why, pnid)
	if err != nil {
		return 0, fmt.Errorf("stop account of number %s: %w", pnid, err)
	}
	return int(tag.RowsAffected()), nil
}

// RaiseThroughput applies a THROUGHPUT_UPGRADE: the number's accounts send
// at the higher throughput from their next claim on.
func (tx inboxTx) RaiseThroughput(ctx context.Context, ev campaign.AccountEvent, now time.Time) (int, error) {
	pnid, err := tx.numberOf(ctx, ev)
	if err != nil || pnid == "" {
		return 0, err
	}
	accts, err := loadAccounts(ctx, tx, `WHERE a.phone_number_id = $2`, pnid)
	if err != nil {
		return 0, err
	}
	for _, a := range accts {
		tier, err := tierLimits(ctx, tx, a.Tier)
		if err != nil {
			return 0, err
		}
		if err := relimit(ctx, tx.Tx, a, a.SendLimits(tier, driver.UpgradedThroughput), now); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, `UPDATE accounts SET throughput_read = $1 WHERE id = $2`, driver.UpgradedThroughput, a.ID); err != nil {
			return 0, fmt.Errorf("raise the throughput of account %s: %w", a.Name, err)
		}
	}
	return len(accts), nil
}

// tierLimits are a tier's limits.
func tierLimits(ctx context.Context, q querier, name string) (campaign.Limits, error) {
	var l campaign.Limits
	if err := q.QueryRow(ctx, `SELECT rate, burst, daily_cap FROM tiers WHERE name = $1`, name).
		Scan(&l.Rate, &l.Burst, &l.DailyCap); err != nil {
		return l, fmt.Errorf("read tier %s: %w", name, err)
	}
	return l, nil
}
