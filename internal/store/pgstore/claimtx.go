package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/claimsql"
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
	c.Common = claimsql.New(sqlTx{c}, postgres)
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
	claimsql.Common // what both drivers write alike
	s               *Store
	tx              pgx.Tx
	queued          pgx.Batch
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

func (c *claimTx) ExpirePending(ctx context.Context, id int64, why string, now time.Time) error {
	if _, err := c.Exec(ctx, expireSQL, now.UnixNano(), why, id); err != nil {
		return fmt.Errorf("expire messages of campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) FinishCampaign(ctx context.Context, id int64, now time.Time) error {
	c.Wrote() // changed: read again
	return managesql.FinishCampaign(ctx, manageTx{c}, postgres, id, now)
}

func (c *claimTx) PauseNoAccount(ctx context.Context, id int64) error {
	c.Wrote() // changed: read again
	return managesql.PauseNoAccount(ctx, manageTx{c}, postgres, id)
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
	started := make([]int64, len(out))
	for i := range out {
		msgs[i], accts[i] = out[i].Message.ID, out[i].Account.ID
		out[i].Message.AccountID = out[i].Account.ID
		if out[i].Started {
			started[i] = 1
		}
	}
	// Ids in the claims' order (ord), so that their attempts read in it.
	rows, err := c.Query(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, started)
		SELECT v.m, v.a, $3, v.s FROM unnest($1::bigint[], $2::bigint[], $4::bigint[]) WITH ORDINALITY AS v(m, a, s, ord) ORDER BY v.ord
		RETURNING id, message_id`, msgs, accts, now.UnixNano(), started)
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
	return c.Common.Accounts(ctx, campaignID)
}

// LogContacts writes the send log in one statement. Postgres refuses to
// update one row twice in a statement, so a pair met twice in a claim is
// one row naming its last two claims (claimsql.LogClaims).
func (c *claimTx) LogContacts(ctx context.Context, cs []campaign.Claim) error {
	if len(cs) == 0 {
		return nil
	}
	type key struct {
		account int64
		phone   string
	}
	type named struct{ at, attempt, prevAt, prevAttempt int64 }
	log := map[key]named{}
	var keys []key
	for _, cl := range cs {
		k, n := key{cl.Account.ID, cl.Message.Phone}, named{at: cl.At.UnixNano(), attempt: cl.AttemptID}
		if prev, ok := log[k]; !ok {
			keys = append(keys, k)
		} else if n.at < prev.at {
			n = named{prev.at, prev.attempt, n.at, n.attempt}
		} else {
			n.prevAt, n.prevAttempt = prev.at, prev.attempt
		}
		log[k] = n
	}
	accts, phones := make([]int64, len(keys)), make([]string, len(keys))
	ats, attempts, prevAts, prevAttempts := make([]int64, len(keys)), make([]int64, len(keys)), make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		n := log[k]
		accts[i], phones[i], ats[i], attempts[i], prevAts[i], prevAttempts[i] = k.account, k.phone, n.at, n.attempt, n.prevAt, n.prevAttempt
	}
	if _, err := c.Exec(ctx, `INSERT INTO contact_log (account_id, phone, last_at, last_attempt, prev_at, prev_attempt)
		SELECT a, p, t, nullif(l, 0), pt, nullif(pl, 0)
		FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) AS u(a, p, t, l, pt, pl) `+
		claimsql.LogClaims(postgres), accts, phones, ats, attempts, prevAts, prevAttempts); err != nil {
		return fmt.Errorf("log sends: %w", err)
	}
	return nil
}

// Shared is the gates ShareLimits gave, nil without: hosts on one
// Postgres share its limits and need none.
func (c *claimTx) Shared() *driver.SharedLimits { return c.s.shared }

func (c *claimTx) Today(t time.Time) string { return c.s.Today(t) }
