package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/managesql"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// WithClaim runs a claim (internal/claim) in one sending transaction: the
// claim lock, then the claim's reads and writes through ClaimTx; fn's error
// rolls it back.
func (s *Store) WithClaim(ctx context.Context, fn func(driver.ClaimTx) error) error {
	return s.sendTx(ctx, func(tx pgx.Tx, lead *pgx.Batch) error {
		// The lock goes with the claim's first read.
		return runClaim(ctx, &claimTx{s: s, tx: tx, queued: *lead}, fn, "")
	})
}

// runClaim runs fn over c and sends the writes still queued when it ends,
// then tail (a statement, or none) in the same round trip; on fn's error
// they are dropped, as the rollback would drop them.
func runClaim(ctx context.Context, c *claimTx, fn func(driver.ClaimTx) error, tail string) error {
	if err := fn(c); err != nil {
		return err
	}
	if tail != "" {
		c.queue(tail, nil, nil)
	}
	return c.flush(ctx)
}

// RecordWithClaim stores outcomes as RecordAll does and, in the same
// transaction, runs fn; what fn wrote is taken back on its error (claimErr),
// the outcomes stay.
func (s *Store) RecordWithClaim(ctx context.Context, runner string, rs []campaign.Result, fn func(driver.ClaimTx) error) (claimErr, err error) {
	var refused []int64
	err = s.sendTx(ctx, func(tx pgx.Tx, lead *pgx.Batch) error {
		claimErr, refused = nil, nil // a retried transaction starts over
		if err := recordAll(ctx, tx, lead, runner, rs, &refused); err != nil {
			return err
		}
		// The lock, the outcomes and the savepoint in one round trip.
		lead.Queue(`SAVEPOINT claim`)
		if err := send(ctx, tx, lead); err != nil {
			return fmt.Errorf("record %d outcomes: %w", len(rs), err)
		}
		err := runClaim(ctx, &claimTx{s: s, tx: tx}, fn, `RELEASE SAVEPOINT claim`)
		if err == nil {
			return nil
		}
		if retryable(err) {
			return err // the whole transaction again
		}
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT claim`); rerr != nil {
			return fmt.Errorf("claim: %w", rerr)
		}
		claimErr = err
		if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT claim`); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claimErr, fenced(refused)
}

// claimTx is driver.ClaimTx on Postgres: each method plain SQL that decides
// nothing, as SQLite's. A write whose result the claim does not read waits
// in a queue and goes with the others in one round trip (a pgx batch)
// before the next read, or when the claim ends: a claim makes some forty
// statements, and on Postgres each is a round trip where SQLite's is a
// function call.
type claimTx struct {
	s      *Store
	tx     pgx.Tx
	queued pgx.Batch
	camp   *campaignRow // the claim's campaign, read once
}

// campaignRow is what the claim reads of its campaign's row: read once, in
// one statement, and again after the claim writes to it. The row is read
// FOR SHARE: an operator's pause or cancel (which lock it to move it)
// comes before the claim or after it, as under SQLite's single writer.
type campaignRow struct {
	id                        int64
	state                     string
	cancelled                 bool
	startAt, beganAt, expires *int64
	expire                    int64
	wf, wt, wd                *int64
	serviceWindow             int64
	prio, weight, borrow      int64
	served                    float64
	idleUntil, pairGap        int64
	kind, template, text      string
	maxCost                   int64 // --max-cost, 0: none
	costCurrency              string
}

// campaign is campaign id's row (campaign.ErrNotFound when there is none).
func (c *claimTx) campaign(ctx context.Context, id int64) (*campaignRow, error) {
	if c.camp != nil && c.camp.id == id {
		return c.camp, nil
	}
	r := &campaignRow{id: id}
	err := c.QueryRow(ctx, `SELECT state, cancelled_at IS NOT NULL, start_at, began_at, expire_after, expires_at,
		window_from, window_to, window_days, service_window, priority, weight, borrow, served, idle_until, pair_gap,
		kind, template, text, max_cost, max_cost_currency FROM campaigns WHERE id = $1 FOR SHARE`, id).Scan(&r.state, &r.cancelled, &r.startAt, &r.beganAt, &r.expire,
		&r.expires, &r.wf, &r.wt, &r.wd, &r.serviceWindow, &r.prio, &r.weight, &r.borrow, &r.served, &r.idleUntil, &r.pairGap,
		&r.kind, &r.template, &r.text, &r.maxCost, &r.costCurrency)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read campaign %d: %w", id, err)
	}
	c.camp = r
	return r, nil
}

var _ driver.ClaimTx = (*claimTx)(nil)

// queue adds a write; check, when set, is given its count of rows.
func (c *claimTx) queue(sql string, args []any, check func(rows int64) error) {
	c.queued.Queue(sql, args...).Exec(func(tag pgconn.CommandTag) error {
		if check == nil {
			return nil
		}
		return check(tag.RowsAffected())
	})
}

// Exec queues a write: its error comes with the next read, or at the end
// of the claim, and rolls the claim back as its own would.
func (c *claimTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.queue(sql, args, nil)
	return pgconn.CommandTag{}, nil
}

// flush sends the queued writes.
func (c *claimTx) flush(ctx context.Context) error {
	if c.queued.Len() == 0 {
		return nil
	}
	b := c.queued
	c.queued = pgx.Batch{}
	if err := c.tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return nil
}

// Query reads after the queued writes.
func (c *claimTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.tx.Query(ctx, sql, args...)
}

// QueryRow reads after the queued writes.
func (c *claimTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := c.flush(ctx); err != nil {
		return errRow{err}
	}
	return c.tx.QueryRow(ctx, sql, args...)
}

// errRow is a row that could not be read.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (c *claimTx) Stopped(ctx context.Context, id int64) error {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return err
	}
	if r.cancelled {
		return campaign.CampaignCancelled.Stopped()
	}
	return campaign.CampaignState(r.state).Stopped()
}

func (c *claimTx) Schedule(ctx context.Context, id int64) (driver.ClaimSchedule, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return driver.ClaimSchedule{}, err
	}
	sc := driver.ClaimSchedule{StartAt: fromNullNanos(r.startAt), BeganAt: fromNullNanos(r.beganAt), ExpiresAt: fromNullNanos(r.expires),
		ExpireAfter: time.Duration(r.expire)}
	if r.wf != nil && r.wt != nil && r.wd != nil {
		sc.Window = &campaign.Window{From: int(*r.wf), To: int(*r.wt), Days: uint8(*r.wd)}
	}
	return sc, nil
}

func (c *claimTx) Begin(ctx context.Context, id int64, now, expires time.Time) error {
	c.camp = nil // changed: read again
	if _, err := c.Exec(ctx, `UPDATE campaigns SET began_at = $1, expires_at = $2 WHERE id = $3`,
		now.UnixNano(), nullNanos(expires), id); err != nil {
		return fmt.Errorf("start campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) ExpirePending(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, expireSQL, now.UnixNano(), why, id); err != nil {
		return fmt.Errorf("expire messages of campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) FinishCampaign(ctx context.Context, id int64, now time.Time) error {
	c.camp = nil // changed: read again
	return managesql.FinishCampaign(ctx, manageTx{c}, postgres, id, now)
}

func (c *claimTx) PauseNoAccount(ctx context.Context, id int64) error {
	c.camp = nil // changed: read again
	return managesql.PauseNoAccount(ctx, manageTx{c}, postgres, id)
}

func (c *claimTx) Turn(ctx context.Context, id int64, now, live time.Time) (driver.ClaimTurn, error) {
	var (
		t               driver.ClaimTurn
		prio, weight    int64
		borrow, idleFor int64
	)
	r, err := c.campaign(ctx, id)
	if err != nil {
		return t, err
	}
	prio, weight, borrow, t.Served, idleFor = r.prio, r.weight, r.borrow, r.served, r.idleUntil
	t.Share.Priority, t.Share.Weight = campaign.Priority(prio), int(weight)
	t.Share.Borrow, t.Idle = time.Duration(borrow), idleFor != 0
	rows, err := c.Query(ctx, `SELECT c.priority, c.served, c.weight,
			coalesce((SELECT string_agg(x.account_id::text, ',') FROM campaign_accounts x WHERE x.campaign_id = c.id), '')
		FROM campaigns c
		WHERE c.id <> $1 AND c.state = 'running' AND c.cancelled_at IS NULL AND (c.start_at IS NULL OR c.start_at <= $2)
		AND c.idle_until <= $2
		AND EXISTS (SELECT 1 FROM runners r WHERE r.campaign_id = c.id AND r.heartbeat_at >= $3)
		AND EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = c.id AND m.state = 'pending' AND m.next_attempt_at <= $2)`,
		id, now.UnixNano(), live.UnixNano())
	if err != nil {
		return t, fmt.Errorf("find competing campaigns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			o              driver.Competitor
			oprio, oweight int64
			excluded       string
		)
		if err := rows.Scan(&oprio, &o.Served, &oweight, &excluded); err != nil {
			return t, fmt.Errorf("find competing campaigns: %w", err)
		}
		o.Priority, o.Weight = campaign.Priority(oprio), int(oweight)
		for _, f := range strings.Split(excluded, ",") {
			if f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return t, fmt.Errorf("find competing campaigns: excluded account %q: %w", f, err)
			}
			o.Excluded = append(o.Excluded, id)
		}
		t.Others = append(t.Others, o)
	}
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("find competing campaigns: %w", err)
	}
	return t, nil
}

func (c *claimTx) SetServed(ctx context.Context, id int64, served float64) error {
	c.camp = nil // changed: read again
	if _, err := c.Exec(ctx, `UPDATE campaigns SET served = $1 WHERE id = $2`, served, id); err != nil {
		return fmt.Errorf("book tokens of campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) Idle(ctx context.Context, id int64, until time.Time) error {
	c.camp = nil // changed: read again
	var err error
	if until.IsZero() {
		_, err = c.Exec(ctx, `UPDATE campaigns SET idle_until = 0 WHERE id = $1`, id)
	} else {
		_, err = c.Exec(ctx, `UPDATE campaigns SET idle_until = greatest(idle_until, $1) WHERE id = $2`, until.UnixNano(), id)
	}
	if err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) PairGap(ctx context.Context, id int64) (time.Duration, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return 0, err
	}
	return time.Duration(r.pairGap), nil
}

func (c *claimTx) RepeatGuard(ctx context.Context, id int64) (string, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return "", err
	}
	return campaign.RepeatGuard(campaign.MessageKind(r.kind), r.template, r.text), nil
}

func (c *claimTx) CountStickyBreaks(ctx context.Context, id int64, breaks map[string]int) error {
	for reason, n := range breaks {
		if _, err := c.Exec(ctx, `INSERT INTO sticky_breaks (campaign_id, reason, n) VALUES ($1, $2, $3)
			ON CONFLICT (campaign_id, reason) DO UPDATE SET n = sticky_breaks.n + excluded.n`, id, reason, n); err != nil {
			return fmt.Errorf("count sticky breaks: %w", err)
		}
	}
	return nil
}

// Due takes its rows FOR UPDATE SKIP LOCKED: a row another transaction is
// moving (a requeue, a cancel, a webhook) is passed over, not waited for.
func (c *claimTx) Due(ctx context.Context, id int64, now time.Time, max int) ([]driver.DueRow, error) {
	rows, err := c.Query(ctx, `SELECT m.id, m.line, m.input, m.phone, m.params, m.body, m.extras, m.attempts, m.retries,
		coalesce(m.account_id, 0), (SELECT s.reason FROM suppressions s WHERE s.phone = m.phone)
		FROM messages m WHERE m.campaign_id = $1 AND m.state = 'pending' AND m.next_attempt_at <= $2
		ORDER BY m.next_attempt_at, m.id LIMIT $3 FOR UPDATE OF m SKIP LOCKED`, id, now.UnixNano(), max)
	if err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	defer rows.Close()
	var out []driver.DueRow
	for rows.Next() {
		var (
			d                       driver.DueRow
			m                       = &d.Message
			params, extras          string
			line, attempts, retries int64
			why                     *string
		)
		if err := rows.Scan(&m.ID, &line, &m.Input, &m.Phone, &params, &m.Body, &extras, &attempts, &retries, &m.AccountID, &why); err != nil {
			return nil, fmt.Errorf("read message: %w", err)
		}
		m.CampaignID, m.Line, m.Attempts, m.Retries = id, int(line), int(attempts), int(retries)
		if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
			return nil, fmt.Errorf("message %d params: %w", m.ID, err)
		}
		var x messageExtras
		if err := json.Unmarshal([]byte(extras), &x); err != nil {
			return nil, fmt.Errorf("message %d extras: %w", m.ID, err)
		}
		m.Header, m.Buttons = x.Header, x.Buttons
		if why != nil {
			d.Suppressed, d.Why = true, *why
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	return out, nil
}

func (c *claimTx) FirstPending(ctx context.Context, id int64) (driver.FirstPending, error) {
	var (
		f       driver.FirstPending
		next    *int64
		sending int64
	)
	if err := c.QueryRow(ctx, `SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at END),
		count(CASE WHEN state = 'sending' THEN 1 END)
		FROM messages WHERE campaign_id = $1 AND state IN ('pending', 'sending')`, id).Scan(&next, &sending); err != nil {
		return f, fmt.Errorf("find next retry: %w", err)
	}
	f.Sending = int(sending)
	if next == nil {
		return f, nil
	}
	f.Next = time.Unix(0, *next)
	var why int64
	err := c.QueryRow(ctx, `SELECT window_wait FROM messages WHERE campaign_id = $1 AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1`, id).Scan(&why)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return f, fmt.Errorf("campaign %d: %w", id, err)
	}
	f.Why = driver.PutOff(why)
	return f, nil
}

func (c *claimTx) NextPutOff(ctx context.Context, id int64, now time.Time) (time.Time, error) {
	var next *int64
	if err := c.QueryRow(ctx, `SELECT min(next_attempt_at) FROM messages
		WHERE campaign_id = $1 AND state = 'pending' AND next_attempt_at > $2 AND window_wait NOT IN ($3, $4)`,
		id, now.UnixNano(), int64(driver.PutOffReach), int64(driver.PutOffCap)).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("find the next retry: %w", err)
	}
	return fromNullNanos(next), nil
}

func (c *claimTx) Zones(ctx context.Context, ids []int64) (map[int64]driver.RowZones, error) {
	rows, err := c.Query(ctx, `SELECT m.id, z.zones, m.window_wait = 1 FROM messages m
		LEFT JOIN zone_sets z ON z.id = m.zone_set WHERE m.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read time zones of due rows: %w", err)
	}
	defer rows.Close()
	zones := make(map[int64]driver.RowZones, len(ids))
	for rows.Next() {
		var (
			id    int64
			z     driver.RowZones
			names *string
		)
		if err := rows.Scan(&id, &names, &z.Waiting); err != nil {
			return nil, fmt.Errorf("read time zones of due rows: %w", err)
		}
		if names != nil {
			z.Zones = *names
		}
		zones[id] = z
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read time zones of due rows: %w", err)
	}
	return zones, nil
}

func (c *claimTx) PutOff(ctx context.Context, id int64, until time.Time, why driver.PutOff) error {
	if _, err := c.Exec(ctx, `UPDATE messages SET next_attempt_at = $1, window_wait = $2 WHERE id = $3 AND state = 'pending'`,
		until.UnixNano(), int64(why), id); err != nil {
		return fmt.Errorf("put off message %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) ReleaseWindow(ctx context.Context, ids []int64) error {
	if _, err := c.Exec(ctx, `UPDATE messages SET window_wait = 0 WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("release messages for their window: %w", err)
	}
	return nil
}

func (c *claimTx) FailSuppressed(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, suppressAtSendSQL, now.UnixNano(), campaign.CodeSuppressed, "suppressed: "+why, id); err != nil {
		return fmt.Errorf("skip suppressed message %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) FailNeverOpen(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, failNeverOpenSQL, now.UnixNano(), why, id); err != nil {
		return fmt.Errorf("fail message %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) ServiceWindow(ctx context.Context, id int64) (bool, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return false, err
	}
	return r.serviceWindow != 0, nil
}

// LastInbound is when each key (a phone or a user id, following
// recipient_links both ways) last wrote to each business number, as on
// SQLite (store/servicewindow.go).
func (c *claimTx) LastInbound(ctx context.Context, keys []string) (map[string]campaign.Wrote, error) {
	rows, err := c.Query(ctx, `WITH k(key) AS (SELECT unnest($1::text[])),
		ids(key, id) AS (SELECT key, key FROM k UNION SELECT k.key, l.user_id FROM k JOIN recipient_links l ON l.phone = k.key
			UNION SELECT k.key, l.phone FROM k JOIN recipient_links l ON l.user_id = k.key)
		SELECT ids.key, i.phone_number_id, max(i.at) FROM ids JOIN inbound_messages i ON i.phone = ids.id
		GROUP BY ids.key, i.phone_number_id`, keys)
	if err != nil {
		return nil, fmt.Errorf("read when recipients last wrote: %w", err)
	}
	defer rows.Close()
	return rowscan.Wrote(rows)
}

func (c *claimTx) SkipNoWindow(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, skipNoWindowSQL, now.UnixNano(), campaign.CodeNoWindow, why, id); err != nil {
		return fmt.Errorf("skip message %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) SkipElsewhere(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, skipElsewhereSQL, now.UnixNano(), campaign.CodeElsewhere, why, id); err != nil {
		return fmt.Errorf("skip message %d: %w", id, err)
	}
	return nil
}

// Take moves the claimed rows to sending, one statement per account, and
// logs their attempts in one more; the triggers count them.
func (c *claimTx) Take(ctx context.Context, runner string, now time.Time, out []campaign.Claim) ([]campaign.Claim, error) {
	type group struct {
		epoch int64
		ids   []int64
	}
	byAccount := map[int64]*group{}
	var order []int64
	for _, cl := range out {
		g := byAccount[cl.Account.ID]
		if g == nil {
			g = &group{epoch: cl.QuotaEpoch}
			byAccount[cl.Account.ID] = g
			order = append(order, cl.Account.ID)
		}
		g.ids = append(g.ids, cl.Message.ID)
	}
	for _, acct := range order {
		g := byAccount[acct]
		// The rows were read FOR UPDATE in this transaction: every one
		// must move.
		want := int64(len(g.ids))
		c.queue(claimSQL, []any{acct, runner, g.epoch, now.UnixNano(), now.Add(campaign.LeaseTerm).UnixNano(), g.ids}, func(n int64) error {
			if n != want {
				return fmt.Errorf("claim messages: %d of %d rows were pending (bug)", n, want)
			}
			return nil
		})
	}
	msgs := make([]int64, len(out))
	accts := make([]int64, len(out))
	for i := range out {
		msgs[i], accts[i] = out[i].Message.ID, out[i].Account.ID
		out[i].Message.AccountID = out[i].Account.ID
	}
	// Ids in the claims' order (ord), so that their attempts read in it.
	rows, err := c.Query(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at)
		SELECT v.m, v.a, $3 FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS v(m, a, ord) ORDER BY v.ord
		RETURNING id, message_id`, msgs, accts, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	defer rows.Close()
	ids := make(map[int64]int64, len(out))
	for rows.Next() {
		var id, msg int64
		if err := rows.Scan(&id, &msg); err != nil {
			return nil, fmt.Errorf("log attempts: %w", err)
		}
		ids[msg] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	for i := range out {
		out[i].AttemptID = ids[out[i].Message.ID]
	}
	return out, nil
}

// Accounts locks the enabled accounts' rows for the claim: an operator's
// change or an answer's reaction to one waits for it, and it for them, so
// no bucket written here overwrites one written meanwhile.
func (c *claimTx) Accounts(ctx context.Context, campaignID int64) ([]driver.ClaimAccount, int, error) {
	if _, err := c.Exec(ctx, `SELECT id FROM accounts WHERE disabled = 0 AND removed_at IS NULL ORDER BY id FOR UPDATE`); err != nil {
		return nil, 0, fmt.Errorf("lock accounts: %w", err)
	}
	accts, err := loadAccounts(ctx, c, `WHERE a.disabled = 0 AND a.id NOT IN
		(SELECT account_id FROM campaign_accounts WHERE campaign_id = $2) ORDER BY a.id`, campaignID)
	if err != nil {
		return nil, 0, err
	}
	out := make([]driver.ClaimAccount, len(accts))
	for i, a := range accts {
		out[i] = driver.ClaimAccount{AccountStatus: a.AccountStatus, Health: a.Health, PortfolioID: a.PortfolioID,
			PinnedLimit: a.PinnedLimit, Margin: a.Margin}
	}
	if len(out) > 0 {
		return out, len(out), nil
	}
	var enabled int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE disabled = 0 AND removed_at IS NULL`).Scan(&enabled); err != nil {
		return nil, 0, fmt.Errorf("count accounts: %w", err)
	}
	return nil, int(enabled), nil
}

func (c *claimTx) Global(ctx context.Context) (driver.GlobalBucket, error) {
	var (
		g         driver.GlobalBucket
		on, burst int64
		at        int64
	)
	if err := c.QueryRow(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1 FOR UPDATE`).
		Scan(&on, &g.Limit.Rate, &burst, &g.Bucket.Tokens, &at); err != nil {
		return g, fmt.Errorf("read global limit: %w", err)
	}
	g.On, g.Limit.Burst, g.Bucket.At = on != 0, int(burst), fromNanos(at)
	return g, nil
}

func (c *claimTx) SpendTokens(ctx context.Context, accountID int64, b ratelimit.Bucket, used int) error {
	if _, err := c.Exec(ctx, `UPDATE accounts SET tokens = $1, tokens_at = $2, used_today = $3 WHERE id = $4`,
		b.Tokens, nanos(b.At), used, accountID); err != nil {
		return fmt.Errorf("spend tokens of account %d: %w", accountID, err)
	}
	return nil
}

func (c *claimTx) SpendGlobal(ctx context.Context, b ratelimit.Bucket) error {
	if _, err := c.Exec(ctx, `UPDATE global_limit SET tokens = $1, tokens_at = $2 WHERE id = 1`, b.Tokens, nanos(b.At)); err != nil {
		return fmt.Errorf("spend global tokens: %w", err)
	}
	return nil
}

func (c *claimTx) CountSends(ctx context.Context, accountID int64, n int) error {
	if _, err := c.Exec(ctx, `UPDATE accounts SET used_today = used_today + $1 WHERE id = $2`, n, accountID); err != nil {
		return fmt.Errorf("count sends of account %d: %w", accountID, err)
	}
	return nil
}

func (c *claimTx) ReachLimit(ctx context.Context, a driver.ClaimAccount) (int, error) {
	read := a.Synced.MessagingLimit
	if a.PortfolioID != 0 {
		// The latest any number of the portfolio read.
		var limit int64
		err := c.QueryRow(ctx, `SELECT messaging_limit_read FROM accounts
			WHERE portfolio_id = $1 AND messaging_limit_read IS NOT NULL AND synced_at IS NOT NULL
			ORDER BY synced_at DESC LIMIT 1`, a.PortfolioID).Scan(&limit)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			read = 0
		case err != nil:
			return 0, fmt.Errorf("read the messaging limit of portfolio %s: %w", a.Portfolio, err)
		default:
			read = int(limit)
		}
	}
	return effectiveLimit(a.PinnedLimit, read), nil
}

// effectiveLimit is the lower of a pinned and a read limit (0: none).
func effectiveLimit(pinned, read int) int {
	if read <= 0 {
		return max(pinned, 0)
	}
	if pinned > 0 {
		return min(pinned, read)
	}
	return read
}

func (c *claimTx) Members(ctx context.Context, portfolioID int64) ([]int64, error) {
	rows, err := c.Query(ctx, `SELECT id FROM accounts WHERE portfolio_id = $1`, portfolioID)
	if err != nil {
		return nil, fmt.Errorf("read portfolio members: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("read portfolio members: %w", err)
	}
	return ids, nil
}

func (c *claimTx) ReachCount(ctx context.Context, sc driver.ReachScope, since time.Time) (int, error) {
	return reachCount(ctx, c, sc, since)
}

func (c *claimTx) ReachOldest(ctx context.Context, members []int64, since time.Time) (time.Time, error) {
	return reachOldest(ctx, c, members, since)
}

func (c *claimTx) LastContacts(ctx context.Context, phones []string) (map[string]driver.LastContact, error) {
	out := make(map[string]driver.LastContact, len(phones))
	if len(phones) == 0 {
		return out, nil
	}
	// Planned at each call with its phones (pgx's CacheDescribe: no
	// prepared statement), so that a scan of the log looks each row up in
	// a hash of them. A prepared statement's generic plan, made after five
	// calls while the log held a few rows (a new database: no statistics),
	// stays for the session, and its scan compares every row with every
	// phone: 41 ms a claim at 20,000 rows, 1 ms planned each time.
	rows, err := c.Query(ctx, lastContactsSQL, pgx.QueryExecModeCacheDescribe, phones)
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
		lc := out[phone]
		if lc.ByAccount == nil {
			lc.ByAccount = map[int64]time.Time{}
		}
		last := fromNanos(at)
		lc.ByAccount[account] = last
		if last.After(lc.At) {
			lc.At = last
		}
		if sent := fromNanos(sentAt); sentAt > 0 && sent.After(lc.SentAt) {
			lc.SentAt, lc.Account = sent, account
		}
		out[phone] = lc
	}
	return out, rows.Err()
}

// lastContactsSQL reads the send log of some phones.
const lastContactsSQL = `SELECT phone, account_id, last_at, sent_at FROM contact_log WHERE phone = ANY($1)`

// LogContacts writes the send log in one statement. A claim logs each
// (account, number) once: Postgres refuses to update one row twice in a
// statement, so a pair met twice keeps its latest instant.
func (c *claimTx) LogContacts(ctx context.Context, cs []campaign.Claim) error {
	if len(cs) == 0 {
		return nil
	}
	type key struct {
		account int64
		phone   string
	}
	at := map[key]int64{}
	var keys []key
	for _, cl := range cs {
		k := key{cl.Account.ID, cl.Message.Phone}
		if prev, ok := at[k]; !ok {
			keys = append(keys, k)
			at[k] = cl.At.UnixNano()
		} else {
			at[k] = max(prev, cl.At.UnixNano())
		}
	}
	accts, phones, ats := make([]int64, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		accts[i], phones[i], ats[i] = k.account, k.phone, at[k]
	}
	if _, err := c.Exec(ctx, `INSERT INTO contact_log (account_id, phone, last_at)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])
		ON CONFLICT (phone, account_id) DO UPDATE
		SET prev_at = contact_log.last_at, last_at = excluded.last_at WHERE excluded.last_at > contact_log.last_at`,
		accts, phones, ats); err != nil {
		return fmt.Errorf("log sends: %w", err)
	}
	return nil
}

func (c *claimTx) Fate(ctx context.Context, campaignID, accountID int64, phoneNumberID string) (driver.AccountFate, error) {
	f := driver.AccountFate{Found: true}
	var (
		disabled int64
		err      error
	)
	if accountID != 0 {
		err = c.QueryRow(ctx, `SELECT disabled, removed_at IS NOT NULL,
			EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = $1 AND account_id = accounts.id)
			FROM accounts WHERE id = $2`, campaignID, accountID).Scan(&disabled, &f.Removed, &f.Dropped)
	} else {
		err = c.QueryRow(ctx, `SELECT disabled, removed_at IS NOT NULL,
			EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = $1 AND account_id = accounts.id)
			FROM accounts WHERE phone_number_id = $2 ORDER BY removed_at IS NULL DESC, id DESC LIMIT 1`, campaignID, phoneNumberID).
			Scan(&disabled, &f.Removed, &f.Dropped)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return driver.AccountFate{}, nil
	case err != nil:
		return f, fmt.Errorf("read the account of %d/%s: %w", accountID, phoneNumberID, err)
	}
	f.Disabled = disabled != 0
	return f, nil
}

// Shared is the gates ShareLimits gave, nil without: hosts on one
// Postgres share its limits and need none.
func (c *claimTx) Shared() *driver.SharedLimits { return c.s.shared }

func (c *claimTx) Today(t time.Time) string { return c.s.Today(t) }

func (c *claimTx) NoteGateWait(ctx context.Context, id int64, now time.Time, reason campaign.WaitReason, detail string) error {
	if _, err := c.Exec(ctx, `INSERT INTO gate_waits (campaign_id, since, seen, reason, error) VALUES ($1, $2, $2, $3, $4)
		ON CONFLICT (campaign_id) DO UPDATE SET seen = excluded.seen, reason = excluded.reason, error = excluded.error`,
		id, now.UnixNano(), string(reason), detail); err != nil {
		return fmt.Errorf("campaign %d: note the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c *claimTx) ClearGateWait(ctx context.Context, id int64) error {
	if _, err := c.Exec(ctx, `DELETE FROM gate_waits WHERE campaign_id = $1`, id); err != nil {
		return fmt.Errorf("campaign %d: clear the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c *claimTx) QueuedRefunds(ctx context.Context, max int) ([]campaign.SharedClaim, error) {
	rows, err := c.Query(ctx, `SELECT claim, portfolio, account, day FROM gate_refunds ORDER BY at LIMIT $1`, max)
	if err != nil {
		return nil, fmt.Errorf("read queued refunds: %w", err)
	}
	defer rows.Close()
	var queued []campaign.SharedClaim
	for rows.Next() {
		var sc campaign.SharedClaim
		if err := rows.Scan(&sc.ID, &sc.Portfolio, &sc.Account, &sc.Day); err != nil {
			return nil, fmt.Errorf("read queued refunds: %w", err)
		}
		queued = append(queued, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read queued refunds: %w", err)
	}
	return queued, nil
}

func (c *claimTx) ForgetRefund(ctx context.Context, claim string) error {
	if _, err := c.Exec(ctx, `DELETE FROM gate_refunds WHERE claim = $1`, claim); err != nil {
		return fmt.Errorf("forget the refund of %s: %w", claim, err)
	}
	return nil
}
