package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/inboxsql"
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
		return fn(newInboxTx(tx), s.now())
	})
}

// inboxTx is driver.InboxTx on Postgres: the statements both drivers write
// alike (inboxsql.Moves) and those below.
type inboxTx struct {
	pgx.Tx
	inboxsql.Moves
}

func newInboxTx(tx pgx.Tx) inboxTx { return inboxTx{tx, inboxsql.Moves{Q: manageTx{tx}, D: postgres}} }

var _ driver.InboxTx = newInboxTx(nil)

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

func (tx inboxTx) Part(ctx context.Context, apply func() error) (skip, err error) {
	return inboxsql.SavepointPart(func(q string) error { _, err := tx.Exec(ctx, q); return err }, apply, tx.fault)
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

// AdoptSend: unknown (or requeued, never answered) → sent, with the
// webhook's wamid as the proof; the wamid's other statuses kept unmatched
// are linked to the row.
func (tx inboxTx) AdoptSend(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error) {
	if ok, err := tx.Adopt(ctx, id, ev, now); !ok || err != nil {
		return false, err
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
		b.Queue(inboxsql.KeepStatusSQL(postgres), inboxsql.StatusArgs(k.Ev, now, k.ID)...)
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

// Deferred: in the order of their webhook times (inboxsql.DeferredSQL).
func (tx inboxTx) Deferred(ctx context.Context, max int) ([]driver.DeferredStatus, error) {
	rows, err := tx.Query(ctx, inboxsql.DeferredSQL+`$1`, max)
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.DeferredStatus, error) {
		return inboxsql.ScanDeferred(row)
	})
	if err != nil {
		return nil, fmt.Errorf("read deferred statuses: %w", err)
	}
	return ds, nil
}

// RaiseThroughput applies a THROUGHPUT_UPGRADE: the number's accounts send
// at the higher throughput from their next claim on.
func (tx inboxTx) RaiseThroughput(ctx context.Context, ev campaign.AccountEvent, now time.Time) (int, error) {
	pnid, err := tx.NumberOf(ctx, ev)
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
