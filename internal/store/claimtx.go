package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// WithClaim runs fn in a sending transaction (see writeSend), committed when
// fn returns nil.
func (s *Store) WithClaim(ctx context.Context, fn func(driver.ClaimTx) error) error {
	return s.writeSend(ctx, func(tx *Tx) error { return fn(&claimTx{tx: tx}) })
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
		if err := fn(&claimTx{tx: tx}); err != nil {
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

// claimTx is ClaimTx on SQLite.
type claimTx struct {
	tx      *Tx
	dropped int // suppressed rows failed
}

func (c *claimTx) Stopped(ctx context.Context, id int64) error { return stopped(ctx, c.tx, id) }

func (c *claimTx) Schedule(ctx context.Context, id int64) (driver.ClaimSchedule, error) {
	var (
		startAt, beganAt, expires sql.NullInt64
		expire                    int64
		wf, wt, wd                sql.NullInt64
	)
	if err := c.tx.QueryRowContext(ctx, `SELECT start_at, began_at, expire_after, expires_at, window_from, window_to, window_days
		FROM campaigns WHERE id = ?`, id).Scan(&startAt, &beganAt, &expire, &expires, &wf, &wt, &wd); err != nil {
		return driver.ClaimSchedule{}, fmt.Errorf("read schedule of campaign %d: %w", id, err)
	}
	return driver.ClaimSchedule{StartAt: fromNullNanos(startAt), BeganAt: fromNullNanos(beganAt), ExpiresAt: fromNullNanos(expires),
		ExpireAfter: time.Duration(expire), Window: windowFrom(wf, wt, wd)}, nil
}

func (c *claimTx) Begin(ctx context.Context, id int64, now, expires time.Time) error {
	if _, err := c.tx.ExecContext(ctx, `UPDATE campaigns SET began_at = ?, expires_at = ? WHERE id = ?`,
		now.UnixNano(), nullNanos(expires), id); err != nil {
		return fmt.Errorf("start campaign %d: %w", id, err)
	}
	return nil
}

// nullNanos is t in Unix nanoseconds, NULL for the zero time.
func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func (c *claimTx) ExpirePending(ctx context.Context, id int64, why string, now time.Time) error {
	return expirePending(ctx, c.tx, id, why, now)
}

func (c *claimTx) FinishCampaign(ctx context.Context, id int64, now time.Time) error {
	return finishCampaign(ctx, c.tx, id, now)
}

func (c *claimTx) PauseNoAccount(ctx context.Context, id int64) error {
	return pauseNoAccount(ctx, c.tx, id)
}

func (c *claimTx) Turn(ctx context.Context, id int64, now, live time.Time) (driver.ClaimTurn, error) {
	var (
		t               driver.ClaimTurn
		borrow, idleFor int64
	)
	if err := c.tx.QueryRowContext(ctx, `SELECT priority, weight, borrow, served, idle_until FROM campaigns WHERE id = ?`, id).
		Scan(&t.Share.Priority, &t.Share.Weight, &borrow, &t.Served, &idleFor); err != nil {
		return t, fmt.Errorf("read priority of campaign %d: %w", id, err)
	}
	t.Share.Borrow, t.Idle = time.Duration(borrow), idleFor != 0
	rows, err := c.tx.QueryContext(ctx, `SELECT c.priority, c.served, c.weight,
			coalesce((SELECT group_concat(x.account_id) FROM campaign_accounts x WHERE x.campaign_id = c.id), '')
		FROM campaigns c
		WHERE c.id <> ?1 AND c.state = 'running' AND c.cancelled_at IS NULL AND (c.start_at IS NULL OR c.start_at <= ?2)
		AND c.idle_until <= ?2
		AND EXISTS (SELECT 1 FROM runners r WHERE r.campaign_id = c.id AND r.heartbeat_at >= ?3)
		AND EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = c.id AND m.state = 'pending' AND m.next_attempt_at <= ?2)`,
		id, now.UnixNano(), live.UnixNano())
	if err != nil {
		return t, fmt.Errorf("find competing campaigns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			o        driver.Competitor
			excluded string
		)
		if err := rows.Scan(&o.Priority, &o.Served, &o.Weight, &excluded); err != nil {
			return t, fmt.Errorf("find competing campaigns: %w", err)
		}
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
	if _, err := c.tx.ExecContext(ctx, `UPDATE campaigns SET served = ? WHERE id = ?`, served, id); err != nil {
		return fmt.Errorf("book tokens of campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) Idle(ctx context.Context, id int64, until time.Time) error {
	var err error
	if until.IsZero() {
		_, err = c.tx.ExecContext(ctx, `UPDATE campaigns SET idle_until = 0 WHERE id = ?`, id)
	} else {
		_, err = c.tx.ExecContext(ctx, `UPDATE campaigns SET idle_until = max(idle_until, ?) WHERE id = ?`, until.UnixNano(), id)
	}
	if err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) PairGap(ctx context.Context, id int64) (time.Duration, error) {
	var gap int64
	if err := c.tx.QueryRowContext(ctx, `SELECT pair_gap FROM campaigns WHERE id = ?`, id).Scan(&gap); err != nil {
		return 0, fmt.Errorf("read the pair gap of campaign %d: %w", id, err)
	}
	return time.Duration(gap), nil
}

func (c *claimTx) RepeatGuard(ctx context.Context, id int64) (string, error) {
	return repeatGuard(ctx, c.tx, id)
}

func (c *claimTx) CountStickyBreaks(ctx context.Context, id int64, breaks map[string]int) error {
	for reason, n := range breaks {
		if _, err := c.tx.ExecContext(ctx, `INSERT INTO sticky_breaks (campaign_id, reason, n) VALUES (?, ?, ?)
			ON CONFLICT (campaign_id, reason) DO UPDATE SET n = n + excluded.n`, id, reason, n); err != nil {
			return fmt.Errorf("count sticky breaks: %w", err)
		}
	}
	return nil
}

func (c *claimTx) Due(ctx context.Context, id int64, now time.Time, max int) ([]driver.DueRow, error) {
	// The suppression list is read in the same query, following the links
	// (links.go) both ways: an index probe each, at no extra round trip.
	rows, err := c.tx.QueryContext(ctx, `SELECT id, line, input, phone, params, body, extras, attempts, retries,
		coalesce(account_id, 0), coalesce((SELECT reason FROM suppressions s WHERE s.phone = messages.phone),
		(SELECT s.reason FROM recipient_links l JOIN suppressions s ON s.phone = l.user_id WHERE l.phone = messages.phone),
		(SELECT s.reason FROM recipient_links l JOIN suppressions s ON s.phone = l.phone WHERE l.user_id = messages.phone))
		FROM messages WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at, id LIMIT ?`, id, now.UnixNano(), max)
	if err != nil {
		return nil, fmt.Errorf("find next messages: %w", err)
	}
	defer rows.Close()
	var out []driver.DueRow
	for rows.Next() {
		var (
			d              driver.DueRow
			m              = &d.Message
			params, extras string
			why            sql.NullString
		)
		if err := rows.Scan(&m.ID, &m.Line, &m.Input, &m.Phone, &params, &m.Body, &extras, &m.Attempts, &m.Retries, &m.AccountID, &why); err != nil {
			return nil, fmt.Errorf("read message: %w", err)
		}
		m.CampaignID = id
		if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
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

func (c *claimTx) FirstPending(ctx context.Context, id int64) (driver.FirstPending, error) {
	var (
		f    driver.FirstPending
		next sql.NullInt64
	)
	if err := c.tx.QueryRowContext(ctx, `SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at END),
		count(CASE WHEN state = 'sending' THEN 1 END)
		FROM messages WHERE campaign_id = ? AND state IN ('pending', 'sending')`, id).Scan(&next, &f.Sending); err != nil {
		return f, fmt.Errorf("find next retry: %w", err)
	}
	if !next.Valid {
		return f, nil
	}
	f.Next = time.Unix(0, next.Int64)
	err := c.tx.QueryRowContext(ctx, `SELECT window_wait FROM messages WHERE campaign_id = ? AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1`, id).Scan(&f.Why)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("campaign %d: %w", id, err)
	}
	return f, nil
}

func (c *claimTx) NextPutOff(ctx context.Context, id int64, now time.Time) (time.Time, error) {
	var next sql.NullInt64
	if err := c.tx.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM messages
		WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at > ? AND window_wait NOT IN (?, ?)`,
		id, now.UnixNano(), driver.PutOffReach, driver.PutOffCap).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("find the next retry: %w", err)
	}
	return fromNullNanos(next), nil
}

func (c *claimTx) Zones(ctx context.Context, ids []int64) (map[int64]driver.RowZones, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := c.tx.QueryContext(ctx, `SELECT m.id, z.zones, m.window_wait = 1 FROM messages m
		LEFT JOIN zone_sets z ON z.id = m.zone_set WHERE m.id IN (`+repeated(len(ids), "?")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read time zones of due rows: %w", err)
	}
	defer rows.Close()
	zones := make(map[int64]driver.RowZones, len(ids))
	for rows.Next() {
		var (
			id    int64
			z     driver.RowZones
			names sql.NullString
		)
		if err := rows.Scan(&id, &names, &z.Waiting); err != nil {
			return nil, fmt.Errorf("read time zones of due rows: %w", err)
		}
		z.Zones = names.String
		zones[id] = z
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read time zones of due rows: %w", err)
	}
	return zones, nil
}

func (c *claimTx) PutOff(ctx context.Context, id int64, until time.Time, why driver.PutOff) error {
	if _, err := c.tx.ExecContext(ctx, `UPDATE messages SET next_attempt_at = ?, window_wait = ? WHERE id = ? AND state = 'pending'`,
		until.UnixNano(), why, id); err != nil {
		return fmt.Errorf("put off message %d: %w", id, err)
	}
	return nil
}

func (c *claimTx) ReleaseWindow(ctx context.Context, ids []int64) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	if _, err := c.tx.ExecContext(ctx, `UPDATE messages SET window_wait = 0 WHERE id IN (`+repeated(len(ids), "?")+`)`,
		args...); err != nil {
		return fmt.Errorf("release messages for their window: %w", err)
	}
	return nil
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

// Take costs one statement per account for the rows, one for the
// attempts, and the counts they change in a few more (tally.go): a batch
// costs a few round trips into SQLite, not several per message.
func (c *claimTx) Take(ctx context.Context, runner string, now time.Time, out []campaign.Claim) ([]campaign.Claim, error) {
	tx := c.tx
	byAccount := map[int64][]any{}
	for _, c := range out {
		byAccount[c.Account.ID] = append(byAccount[c.Account.ID], c.Message.ID)
	}
	for _, c := range out {
		ids, ok := byAccount[c.Account.ID]
		if !ok {
			continue
		}
		delete(byAccount, c.Account.ID)
		if err := claimRows(ctx, tx, c.Account.ID, runner, c.QuotaEpoch, now, ids); err != nil {
			return nil, err
		}
	}
	var t tally
	size := padded(len(out))
	args := make([]any, 0, 5*size)
	for i := range out {
		c := &out[i]
		// A message's first request is tallied here; a later one is left
		// to the trigger, which looks up the requests before it.
		first := c.Message.Attempts == 1
		args = append(args, c.Message.ID, c.Account.ID, now.UnixNano(), first, i)
		t.move(c.Message.CampaignID, c.Message.AccountID, campaign.Pending, c.Account.ID, campaign.Sending)
		if first {
			t.request(c.Message.CampaignID, c.Account.ID, now)
		}
		c.Message.AccountID = c.Account.ID
	}
	for i := len(out); i < size; i++ {
		args = append(args, 0, 0, 0, false, i)
	}
	// In the claims' order (column5), so that their ids are consecutive.
	res, err := tx.ExecContext(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, tally)
		SELECT column1, column2, column3, column4 FROM (VALUES `+repeated(size, "(?, ?, ?, ?, ?)")+`)
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

func (c *claimTx) Accounts(ctx context.Context, campaignID int64) ([]driver.ClaimAccount, int, error) {
	accts, err := loadAccounts(ctx, c.tx, `WHERE a.disabled = 0 AND a.id NOT IN
		(SELECT account_id FROM campaign_accounts WHERE campaign_id = ?) ORDER BY a.id`, campaignID)
	if err != nil {
		return nil, 0, err
	}
	out := make([]driver.ClaimAccount, len(accts))
	for i, a := range accts {
		out[i] = driver.ClaimAccount{AccountStatus: a.AccountStatus, Health: a.health, PortfolioID: a.portfolioID,
			PinnedLimit: a.pinnedLimit, Margin: a.margin}
	}
	if len(out) > 0 {
		return out, len(out), nil
	}
	var enabled int
	if err := c.tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE disabled = 0 AND removed_at IS NULL`).Scan(&enabled); err != nil {
		return nil, 0, fmt.Errorf("count accounts: %w", err)
	}
	return nil, enabled, nil
}

func (c *claimTx) Global(ctx context.Context) (driver.GlobalBucket, error) {
	var (
		g  driver.GlobalBucket
		at int64
	)
	if err := c.tx.QueryRowContext(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`).
		Scan(&g.On, &g.Limit.Rate, &g.Limit.Burst, &g.Bucket.Tokens, &at); err != nil {
		return g, fmt.Errorf("read global limit: %w", err)
	}
	g.Bucket.At = fromNanos(at)
	return g, nil
}

func (c *claimTx) SpendTokens(ctx context.Context, accountID int64, b ratelimit.Bucket, used int) error {
	if _, err := c.tx.ExecContext(ctx, `UPDATE accounts SET tokens = ?, tokens_at = ?, used_today = ? WHERE id = ?`,
		b.Tokens, nanos(b.At), used, accountID); err != nil {
		return fmt.Errorf("spend tokens of account %d: %w", accountID, err)
	}
	return nil
}

func (c *claimTx) SpendGlobal(ctx context.Context, b ratelimit.Bucket) error {
	if _, err := c.tx.ExecContext(ctx, `UPDATE global_limit SET tokens = ?, tokens_at = ? WHERE id = 1`,
		b.Tokens, nanos(b.At)); err != nil {
		return fmt.Errorf("spend global tokens: %w", err)
	}
	return nil
}

func (c *claimTx) CountSends(ctx context.Context, accountID int64, n int) error {
	if _, err := c.tx.ExecContext(ctx, `UPDATE accounts SET used_today = used_today + ? WHERE id = ?`, n, accountID); err != nil {
		return fmt.Errorf("count sends of account %d: %w", accountID, err)
	}
	return nil
}

// claimAccount is the account as stored, as the claim read it.
func claimAccount(a driver.ClaimAccount) account {
	return account{AccountStatus: a.AccountStatus, health: a.Health, portfolioID: a.PortfolioID, pinnedLimit: a.PinnedLimit, margin: a.Margin}
}

func (c *claimTx) ReachLimit(ctx context.Context, a driver.ClaimAccount) (int, error) {
	read, _, _, err := readLimit(ctx, c.tx, claimAccount(a))
	if err != nil {
		return 0, err
	}
	return effectiveLimit(a.PinnedLimit, read), nil
}

func (c *claimTx) Members(ctx context.Context, portfolioID int64) ([]int64, error) {
	return portfolioMembers(ctx, c.tx, portfolioID)
}

func (c *claimTx) ReachCount(ctx context.Context, s driver.ReachScope, since time.Time) (int, error) {
	return reachCount(ctx, c.tx, c.tx, s, since)
}

func (c *claimTx) ReachOldest(ctx context.Context, members []int64, since time.Time) (time.Time, error) {
	return reachOldest(ctx, c.tx, members, since)
}

func (c *claimTx) LastContacts(ctx context.Context, phones []string) (map[string]driver.LastContact, error) {
	return readLastContacts(ctx, c.tx, phones)
}

// readLastContacts looks numbers up in the send log, in one query.
func readLastContacts(ctx context.Context, q querier, phones []string) (map[string]driver.LastContact, error) {
	out := make(map[string]driver.LastContact, len(phones))
	if len(phones) == 0 {
		return out, nil
	}
	args := make([]any, padded(len(phones)))
	for i := range args {
		args[i] = "" // padding: no number is empty
	}
	for i, p := range phones {
		args[i] = p
	}
	// One row per account that ever messaged a number: a handful each.
	rows, err := q.QueryContext(ctx, `SELECT phone, account_id, last_at, sent_at
		FROM contact_log WHERE phone IN (`+repeated(len(args), "?")+`)`, args...)
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
		c := out[phone]
		if c.ByAccount == nil {
			c.ByAccount = map[int64]time.Time{}
		}
		last := fromNanos(at)
		c.ByAccount[account] = last
		if last.After(c.At) {
			c.At = last
		}
		if sent := fromNanos(sentAt); sentAt > 0 && sent.After(c.SentAt) {
			c.SentAt, c.Account = sent, account
		}
		out[phone] = c
	}
	return out, rows.Err()
}

func (c *claimTx) LogContacts(ctx context.Context, cs []campaign.Claim) error {
	if len(cs) == 0 {
		return nil
	}
	size := padded(len(cs))
	args := make([]any, 0, 3*size)
	for _, c := range cs {
		args = append(args, c.Account.ID, c.Message.Phone, c.At.UnixNano())
	}
	for i := len(cs); i < size; i++ {
		args = append(args, 0, "", 0)
	}
	if _, err := c.tx.ExecContext(ctx, `INSERT INTO contact_log (account_id, phone, last_at)
		SELECT column1, column2, column3 FROM (VALUES `+repeated(size, "(?, ?, ?)")+`) WHERE column1 <> 0
		ON CONFLICT (account_id, phone) DO UPDATE
		SET prev_at = last_at, last_at = excluded.last_at WHERE excluded.last_at > last_at`, args...); err != nil {
		return fmt.Errorf("log sends: %w", err)
	}
	return nil
}

func (c *claimTx) Fate(ctx context.Context, campaignID, accountID int64, phoneNumberID string) (driver.AccountFate, error) {
	f := driver.AccountFate{Found: true}
	var err error
	if accountID != 0 {
		err = c.tx.QueryRowContext(ctx, `SELECT disabled, removed_at IS NOT NULL,
			EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = ? AND account_id = accounts.id)
			FROM accounts WHERE id = ?`, campaignID, accountID).Scan(&f.Disabled, &f.Removed, &f.Dropped)
	} else {
		err = c.tx.QueryRowContext(ctx, `SELECT disabled, removed_at IS NOT NULL,
			EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = ? AND account_id = accounts.id)
			FROM accounts WHERE phone_number_id = ? ORDER BY removed_at IS NULL DESC, id DESC LIMIT 1`, campaignID, phoneNumberID).
			Scan(&f.Disabled, &f.Removed, &f.Dropped)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.AccountFate{}, nil
	case err != nil:
		return f, fmt.Errorf("read the account of %d/%s: %w", accountID, phoneNumberID, err)
	}
	return f, nil
}

func (c *claimTx) Shared() *driver.SharedLimits { return c.tx.s.shared }

func (c *claimTx) Today(t time.Time) string { return c.tx.s.today(t) }

func (c *claimTx) NoteGateWait(ctx context.Context, id int64, now time.Time, reason campaign.WaitReason, detail string) error {
	if _, err := c.tx.ExecContext(ctx, `INSERT INTO gate_waits (campaign_id, since, seen, reason, error) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (campaign_id) DO UPDATE SET seen = excluded.seen, reason = excluded.reason, error = excluded.error`,
		id, now.UnixNano(), now.UnixNano(), string(reason), detail); err != nil {
		return fmt.Errorf("campaign %d: note the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c *claimTx) ClearGateWait(ctx context.Context, id int64) error {
	if _, err := c.tx.ExecContext(ctx, `DELETE FROM gate_waits WHERE campaign_id = ?`, id); err != nil {
		return fmt.Errorf("campaign %d: clear the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c *claimTx) QueuedRefunds(ctx context.Context, max int) ([]campaign.SharedClaim, error) {
	rows, err := c.tx.QueryContext(ctx, `SELECT claim, portfolio, account, day FROM gate_refunds ORDER BY at LIMIT ?`, max)
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
	if _, err := c.tx.ExecContext(ctx, `DELETE FROM gate_refunds WHERE claim = ?`, claim); err != nil {
		return fmt.Errorf("forget the refund of %s: %w", claim, err)
	}
	return nil
}

func (c *claimTx) HostPart(ctx context.Context, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	return hostPart(ctx, c.tx, host, portfolio, today, now)
}
