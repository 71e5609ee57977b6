package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/jsonstrings"
)

// WithClaim runs fn in a sending transaction (see writeSend), committed when
// fn returns nil.
func (s *Store) WithClaim(ctx context.Context, fn func(driver.ClaimTx) error) error {
	return s.writeSend(ctx, func(tx *Tx) error { return fn(newClaimTx(tx)) })
}

// RecordWithClaim stores outcomes as RecordAll does and, in the same
// transaction, runs fn: one commit where there were two. err is RecordAll's
// (nothing was stored; but a *campaign.FenceError means all else was,
// and fn ran); an error of fn takes back what fn wrote, is claimErr, and
// the outcomes stay.
func (s *Store) RecordWithClaim(ctx context.Context, runner string, rs []campaign.Result, fn func(driver.ClaimTx) error) (claimErr, err error) {
	var refused []int64
	err = s.writeSend(ctx, func(tx *Tx) (err error) {
		claimErr = nil // a retried transaction starts over
		if refused, err = recordAll(ctx, tx, runner, rs); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT claim`); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if err := fn(newClaimTx(tx)); err != nil {
			if errors.Is(err, errUnbounded) {
				return err // the whole transaction again, as an ordinary write
			}
			if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO claim`); rerr != nil {
				return fmt.Errorf("claim: %w", rerr)
			}
			claimErr = err
		}
		if _, err := tx.ExecContext(ctx, `RELEASE claim`); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claimErr, fenced(refused, nil)
}

// maxDroppedInMemory bounds the suppressed rows a sending transaction
// fails before it runs again as an ordinary write (see writeSend).
const maxDroppedInMemory = 2048

// claimTx is ClaimTx on SQLite: what both drivers write alike is
// claimsql's (Common), the rest SQLite's own.
type claimTx struct {
	claimsql.Common
	tx      *Tx
	dropped int // suppressed rows failed
}

func newClaimTx(tx *Tx) *claimTx {
	return &claimTx{Common: claimsql.New(sqlTx{tx}, sqlite), tx: tx}
}

func (c *claimTx) ExpirePending(ctx context.Context, id int64, why string, now time.Time) error {
	return expirePending(ctx, c.tx, id, why, now)
}

func (c *claimTx) FinishCampaign(ctx context.Context, id int64, now time.Time) error {
	c.Wrote()
	return finishCampaign(ctx, c.tx, id, now)
}

func (c *claimTx) PauseNoAccount(ctx context.Context, id int64) error {
	c.Wrote()
	return pauseNoAccount(ctx, c.tx, id)
}

func (c *claimTx) Due(ctx context.Context, id int64, now time.Time, max int) ([]driver.DueRow, error) {
	// The suppression list is read in the same query, following the links
	// (links.go) both ways: an index probe each, at no extra round trip.
	// SQLite recompiles a statement at each run (the driver clears its
	// bindings) when its plan weighs a bound value: a bound LIMIT, or with
	// an ORDER BY an `x = ?` term (TestSendingPathCompilesOnce). So the
	// LIMIT is written, padded (the rows past max are never stepped to), and
	// the campaign's id is a CAST, which the plan does not weigh.
	rows, err := c.tx.QueryContext(ctx, `SELECT id, line, input, phone, params, body, extras, attempts, retries,
		coalesce(account_id, 0), coalesce((SELECT reason FROM suppressions s WHERE s.phone = messages.phone),
		(SELECT s.reason FROM recipient_links l JOIN suppressions s ON s.phone = l.user_id WHERE l.phone = messages.phone),
		(SELECT s.reason FROM recipient_links l JOIN suppressions s ON s.phone = l.phone WHERE l.user_id = messages.phone))
		FROM messages WHERE campaign_id = CAST(? AS INTEGER) AND state = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at, id LIMIT `+strconv.Itoa(padded(max)), id, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	defer rows.Close()
	out := make([]driver.DueRow, 0, min(max, 64)) // rows are large: no regrowth for a usual batch
	for len(out) < max && rows.Next() {
		var (
			d                       driver.DueRow
			m                       = &d.Message
			params, extras          string
			why                     sql.NullString
			line, attempts, retries int64 // database/sql puts an int64 into an int through its decimal text
		)
		if err := rows.Scan(&m.ID, &line, &m.Input, &m.Phone, &params, &m.Body, &extras, &attempts, &retries, &m.AccountID, &why); err != nil {
			return nil, fmt.Errorf("read message: %w", err)
		}
		m.CampaignID, m.Line, m.Attempts, m.Retries = id, int(line), int(attempts), int(retries)
		if m.Params, err = jsonstrings.Parse(params); err != nil {
			return nil, fmt.Errorf("message %d params: %w", m.ID, err)
		}
		if err := unmarshalExtras(extras, m); err != nil {
			return nil, fmt.Errorf("message %d extras: %w", m.ID, err)
		}
		d.Suppressed, d.Why = why.Valid, why.String
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	return out, nil
}

func (c *claimTx) FailSuppressed(ctx context.Context, id int64, why string, now time.Time) error {
	if c.tx.send && c.dropped >= maxDroppedInMemory {
		// A sending transaction keeps what it changes in memory
		// (writeSend): a long block of suppressed rows goes to an
		// ordinary one.
		return errUnbounded
	}
	c.dropped++
	return suppressAtSend(ctx, c.tx, id, why, now)
}

func (c *claimTx) FailNeverOpen(ctx context.Context, id int64, why string, now time.Time) error {
	return failNeverOpen(ctx, c.tx, id, why, now)
}

func (c *claimTx) SkipElsewhere(ctx context.Context, id int64, why string, now time.Time) error {
	return skipElsewhere(ctx, c.tx, id, why, now)
}

// Take costs one statement for the rows, one for the attempts, and the
// counts they change in a few more (tally.go): a batch costs a few round
// trips into SQLite, not several per message.
func (c *claimTx) Take(ctx context.Context, runner string, now time.Time, out []campaign.Claim) ([]campaign.Claim, error) {
	tx := c.tx
	if err := claimRows(ctx, tx, runner, now, out); err != nil {
		return nil, err
	}
	var t tally
	size := padded(len(out))
	args := make([]any, 0, 6*size)
	for i := range out {
		c := &out[i]
		// A message's first request is tallied here; a later one is left
		// to the trigger, which looks up the requests before it.
		first := c.Message.Attempts == 1
		args = append(args, c.Message.ID, c.Account.ID, now.UnixNano(), first, i, c.Started)
		t.move(c.Message.CampaignID, c.Message.AccountID, campaign.Pending, c.Account.ID, campaign.Sending)
		if first {
			t.request(c.Message.CampaignID, c.Account.ID, now)
		}
		c.Message.AccountID = c.Account.ID
	}
	for i := len(out); i < size; i++ {
		args = append(args, 0, 0, 0, false, i, false)
	}
	// In the claims' order (column5), so that their ids are consecutive.
	res, err := tx.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, tally, started)
		SELECT column1, column2, column3, column4, column6 FROM (VALUES `+repeated(size, "(?, ?, ?, ?, ?, ?)")+`)
		WHERE column1 <> 0 ORDER BY column5`, args...)
	if err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	// The rows of one INSERT get consecutive ids, the last one reported.
	last, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("log attempts: %w", err)
	}
	for i := range out {
		out[i].AttemptID = last - int64(len(out)-1-i)
	}
	if err := t.write(ctx, tx); err != nil {
		return nil, err
	}
	return out, nil
}

var logContactsSQL = `INSERT INTO contact_log (account_id, phone, last_at, last_attempt) SELECT column1, column2, column3,
	nullif(column4, 0) FROM (VALUES %s) WHERE column1 <> 0 ` + claimsql.LogClaims(sqlite)

func (c *claimTx) LogContacts(ctx context.Context, cs []campaign.Claim) error {
	if len(cs) == 0 {
		return nil
	}
	size := padded(len(cs))
	args := make([]any, 0, 4*size)
	for _, c := range cs {
		args = append(args, c.Account.ID, c.Message.Phone, c.At.UnixNano(), c.AttemptID)
	}
	for i := len(cs); i < size; i++ {
		args = append(args, 0, "", 0, 0)
	}
	if _, err := c.tx.ExecContext(ctx, claimsql.Repeated(logContactsSQL, size, "(?, ?, ?, ?)"), args...); err != nil {
		return fmt.Errorf("log sends: %w", err)
	}
	return nil
}

func (c *claimTx) Shared() *driver.SharedLimits { return c.tx.s.shared }

func (c *claimTx) Today(t time.Time) string { return c.tx.s.today(t) }
