// Package claimsql is the part of a claim's transaction (driver.ClaimTx)
// that both drivers of the store write alike: the campaign's turn among its
// competitors, its served tokens and idleness, the rows put off and held
// for their window, the accounts offered, the buckets and caps spent, the
// send log read, what became of an account, a portfolio's limit, members
// and running reach count (and the portfolios' list built from them), the
// waits and refunds of the shared limits, and a host's part of a lost
// quota day. A fix to one of them is made once.
//
// The statements are written once, in recordsql's manner: SQLite's
// numbered placeholders (?N), built for each Dialect with Bind. What
// differs is said where it differs: a list of ids is an IN list on SQLite
// and one array on Postgres; Postgres locks the rows SQLite's one writer
// holds already. A driver embeds Common in its ClaimTx and keeps in its
// own words what it does its own way (the claim's rows and their bulk
// writes, its campaign's row, the rows it locks).
package claimsql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Tx is a driver's claim transaction as Common reads and writes through it.
type Tx interface {
	// Exec runs a write built for the driver's Dialect and says how many
	// rows it changed (a driver that queues its writes may say 0).
	Exec(ctx context.Context, query string, args ...any) (rows int64, err error)
	// Query runs a read, after every write before it.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// Accounts reads rowscan.AccountQuery's rows (its first placeholder
	// the default margin) followed by where, whose placeholders start at 2.
	Accounts(ctx context.Context, where string, args ...any) ([]rowscan.Account, error)
}

// PlanEachCall, as a query's first argument, asks the driver to plan the
// query with its arguments at every call rather than once for the session
// (on Postgres, pgx's QueryExecModeCacheDescribe: no prepared statement).
var PlanEachCall planEachCall

type planEachCall struct{}

// Rows are a read's rows: a pgx.Rows, or a *sql.Rows whose Close is
// wrapped (its error is Err's).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Common is the part of driver.ClaimTx both drivers share.
type Common struct {
	tx   Tx
	d    dialect.Dialect
	camp *struct{ row *campaignRow } // the claim's campaign, once read (campaign.go)
}

// New is Common over tx, in d's SQL.
func New(tx Tx, d dialect.Dialect) Common {
	return Common{tx: tx, d: d, camp: new(struct{ row *campaignRow })}
}

// exec runs query, written with ?N, in c's dialect.
func (c Common) exec(ctx context.Context, query string, args ...any) error {
	_, err := c.tx.Exec(ctx, c.bind(query), args...)
	return err
}

// query reads query, written with ?N, in c's dialect.
func (c Common) query(ctx context.Context, query string, args ...any) (Rows, error) {
	return c.tx.Query(ctx, c.bind(query), args...)
}

// postgres holds each query as Postgres spells it, built the first time:
// its texts are a few dozen, whatever the batch (a list is one array).
var postgres sync.Map

// bind is query in c's dialect.
func (c Common) bind(query string) string {
	if c.d != dialect.Postgres {
		return query
	}
	if b, ok := postgres.Load(query); ok {
		return b.(string)
	}
	b := c.d.Bind(query)
	postgres.Store(query, b)
	return b
}

// row reads query's first row into dest; found is false when it has none.
func (c Common) row(ctx context.Context, query string, args []any, dest ...any) (found bool, err error) {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	return true, rows.Err()
}

// each reads query's rows, each through scan.
func (c Common) each(ctx context.Context, scan func(Rows) error, query string, args ...any) error {
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// in is "col IN (...)" for vals in d's words, its placeholders numbered
// from first, and its arguments: SQLite lists each value (padded to
// Padded's size with pad, when pad is not nil, so a few statements serve
// every batch); Postgres passes them as one array, one statement for all.
func in[T any](d dialect.Dialect, col string, first int, vals []T, pad any) (string, []any) {
	if d == dialect.Postgres {
		return col + ` = ANY(?` + strconv.Itoa(first) + `)`, []any{vals}
	}
	n := len(vals)
	if pad != nil {
		n = Padded(n)
	}
	args := make([]any, n)
	for i := range n {
		if args[i] = pad; i < len(vals) {
			args[i] = vals[i]
		}
	}
	return inList(col, first, n), args
}

// inLists holds SQLite's IN lists by column, first placeholder and
// length: a claim's are a few, built again at every claim otherwise (a
// string and an allocation a value).
var inLists sync.Map

type inKey struct {
	col      string
	first, n int
}

// inList is "col IN (?first, …)" of n placeholders.
func inList(col string, first, n int) string {
	k := inKey{col, first, n}
	if l, ok := inLists.Load(k); ok {
		return l.(string)
	}
	var b strings.Builder
	b.WriteString(col + ` IN (`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("?" + strconv.Itoa(first+i))
	}
	b.WriteString(")")
	inLists.Store(k, b.String())
	return b.String()
}

// values is "(?1), (?2), …" of n rows, kept by n.
func values(n int) string {
	k := inKey{"VALUES", 1, n}
	if l, ok := inLists.Load(k); ok {
		return l.(string)
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?" + strconv.Itoa(i+1) + ")")
	}
	inLists.Store(k, b.String())
	return b.String()
}

// texts holds SQLite's multi-row statements by format, rows and row
// (Repeated).
var texts sync.Map

type textKey struct {
	format string
	n      int
	one    string
}

// Repeated is format with n comma-separated copies of one in place of its %s,
// kept: the sending path's multi-row statements are a few texts (Padded),
// built once, not at every transaction (a string of kilobytes).
func Repeated(format string, n int, one string) string {
	k := textKey{format, n, one}
	if t, ok := texts.Load(k); ok {
		return t.(string)
	}
	t := fmt.Sprintf(format, strings.TrimSuffix(strings.Repeat(one+", ", n), ", "))
	texts.Store(k, t)
	return t
}

// Padded is the size a multi-row statement of SQLite's sending path takes
// for n rows: 8, then steps of 32. The rest are padding rows that match or
// insert nothing (id 0), so a few prepared statements serve every batch;
// one for each exact size was a statement prepared, twice (database/sql
// prepares on the pool, then on the writer), in most transactions. A
// padding row costs its arguments and a lookup.
func Padded(n int) int {
	if n <= 8 {
		return 8
	}
	return (n + 31) / 32 * 32
}

// Begin records the campaign's start at now and its deadline (zero:
// none).
func (c Common) Begin(ctx context.Context, id int64, now, expires time.Time) error {
	var deadline any // NULL without one
	if !expires.IsZero() {
		deadline = expires.UnixNano()
	}
	c.Wrote()
	if err := c.exec(ctx, `UPDATE campaigns SET began_at = ?1, expires_at = ?2 WHERE id = ?3`, now.UnixNano(), deadline, id); err != nil {
		return fmt.Errorf("start campaign %d: %w", id, err)
	}
	return nil
}

// Competitors are the campaigns competing with campaign id at now (see
// driver.ClaimTx.Turn), each with the accounts dropped from it. The
// runners, a row a live process, are scanned (+r.campaign_id): SQLite
// built an automatic index of them at every claim that got that far.
func (c Common) Competitors(ctx context.Context, id int64, now, live time.Time) ([]driver.Competitor, error) {
	joined := `group_concat(x.account_id)`
	if c.d == dialect.Postgres {
		joined = `string_agg(x.account_id::text, ',')`
	}
	var out []driver.Competitor
	err := c.each(ctx, func(rows Rows) error {
		var (
			o            driver.Competitor
			prio, weight int64
			excluded     string
		)
		if err := rows.Scan(&prio, &o.Served, &weight, &excluded); err != nil {
			return err
		}
		o.Priority, o.Weight = campaign.Priority(prio), int(weight)
		for _, f := range strings.Split(excluded, ",") {
			if f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return fmt.Errorf("excluded account %q: %w", f, err)
			}
			o.Excluded = append(o.Excluded, id)
		}
		out = append(out, o)
		return nil
	}, `SELECT c.priority, c.served, c.weight,
			coalesce((SELECT `+joined+` FROM campaign_accounts x WHERE x.campaign_id = c.id), '')
		FROM campaigns c
		WHERE c.id <> ?1 AND c.state = 'running' AND c.cancelled_at IS NULL AND (c.start_at IS NULL OR c.start_at <= ?2)
		AND c.idle_until <= ?2
		AND EXISTS (SELECT 1 FROM runners r WHERE +r.campaign_id = c.id AND r.heartbeat_at >= ?3)
		AND EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = c.id AND m.state = 'pending' AND m.next_attempt_at <= ?2)`,
		id, now.UnixNano(), live.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("find competing campaigns: %w", err)
	}
	return out, nil
}

func (c Common) SetServed(ctx context.Context, id int64, served float64) error {
	c.Wrote()
	if err := c.exec(ctx, `UPDATE campaigns SET served = ?1 WHERE id = ?2`, served, id); err != nil {
		return fmt.Errorf("book tokens of campaign %d: %w", id, err)
	}
	return nil
}

func (c Common) Idle(ctx context.Context, id int64, until time.Time) error {
	c.Wrote()
	var err error
	if until.IsZero() {
		err = c.exec(ctx, `UPDATE campaigns SET idle_until = 0 WHERE id = ?1`, id)
	} else {
		err = c.exec(ctx, `UPDATE campaigns SET idle_until = `+c.d.Greatest("idle_until", "?1")+` WHERE id = ?2`, until.UnixNano(), id)
	}
	if err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return nil
}

func (c Common) CountStickyBreaks(ctx context.Context, id int64, breaks map[string]int) error {
	for reason, n := range breaks {
		if err := c.exec(ctx, `INSERT INTO sticky_breaks (campaign_id, reason, n) VALUES (?1, ?2, ?3)
			ON CONFLICT (campaign_id, reason) DO UPDATE SET n = sticky_breaks.n + excluded.n`, id, reason, n); err != nil {
			return fmt.Errorf("count sticky breaks: %w", err)
		}
	}
	return nil
}

func (c Common) FirstPending(ctx context.Context, id int64) (driver.FirstPending, error) {
	var (
		f            driver.FirstPending
		next         *int64
		sending, why int64
	)
	// Each state through its own index (see dialect.Unindexed).
	if _, err := c.row(ctx, `SELECT (SELECT min(next_attempt_at) FROM messages WHERE campaign_id = ?1 AND state = 'pending'),
		(SELECT count(*) FROM messages WHERE `+c.d.Unindexed("campaign_id")+` = ?1 AND state = 'sending')`, []any{id}, &next, &sending); err != nil {
		return f, fmt.Errorf("find next retry: %w", err)
	}
	f.Sending = int(sending)
	if next == nil {
		return f, nil
	}
	f.Next = time.Unix(0, *next)
	if _, err := c.row(ctx, `SELECT window_wait FROM messages WHERE campaign_id = ?1 AND state = 'pending'
		ORDER BY next_attempt_at, id LIMIT 1`, []any{id}, &why); err != nil {
		return f, fmt.Errorf("campaign %d: %w", id, err)
	}
	f.Why = driver.PutOff(why)
	return f, nil
}

func (c Common) NextPutOff(ctx context.Context, id int64, now time.Time) (time.Time, error) {
	var next *int64
	if _, err := c.row(ctx, `SELECT min(next_attempt_at) FROM messages
		WHERE campaign_id = ?1 AND state = 'pending' AND next_attempt_at > ?2 AND window_wait NOT IN (?3, ?4)`,
		[]any{id, now.UnixNano(), int64(driver.PutOffReach), int64(driver.PutOffCap)}, &next); err != nil {
		return time.Time{}, fmt.Errorf("find the next retry: %w", err)
	}
	if next == nil {
		return time.Time{}, nil
	}
	return rowscan.FromNanos(*next), nil
}

func (c Common) Zones(ctx context.Context, ids []int64) (map[int64]driver.RowZones, error) {
	where, args := in(c.d, "m.id", 1, ids, nil)
	zones := make(map[int64]driver.RowZones, len(ids))
	err := c.each(ctx, func(rows Rows) error {
		var (
			id    int64
			z     driver.RowZones
			names *string
		)
		if err := rows.Scan(&id, &names, &z.Waiting); err != nil {
			return err
		}
		if names != nil {
			z.Zones = *names
		}
		zones[id] = z
		return nil
	}, `SELECT m.id, z.zones, m.window_wait = 1 FROM messages m LEFT JOIN zone_sets z ON z.id = m.zone_set WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read time zones of due rows: %w", err)
	}
	return zones, nil
}

func (c Common) PutOff(ctx context.Context, id int64, until time.Time, why driver.PutOff) error {
	if err := c.exec(ctx, `UPDATE messages SET next_attempt_at = ?1, window_wait = ?2 WHERE id = ?3 AND state = 'pending'`,
		until.UnixNano(), int64(why), id); err != nil {
		return fmt.Errorf("put off message %d: %w", id, err)
	}
	return nil
}

func (c Common) ReleaseWindow(ctx context.Context, ids []int64) error {
	where, args := in(c.d, "id", 1, ids, nil)
	if err := c.exec(ctx, `UPDATE messages SET window_wait = 0 WHERE `+where, args...); err != nil {
		return fmt.Errorf("release messages for their window: %w", err)
	}
	return nil
}

// Accounts are the enabled accounts not dropped from the campaign, and how
// many accounts are enabled at all. NOT EXISTS, not NOT IN: a probe of
// the key for each account, where SQLite built the list of dropped ones
// into a temporary table at every claim.
func (c Common) Accounts(ctx context.Context, campaignID int64) ([]driver.ClaimAccount, int, error) {
	accts, err := c.tx.Accounts(ctx, c.bind(`WHERE a.disabled = 0 AND NOT EXISTS
		(SELECT 1 FROM campaign_accounts x WHERE x.campaign_id = ?2 AND x.account_id = a.id) ORDER BY a.id`), campaignID)
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
	if _, err := c.row(ctx, `SELECT count(*) FROM accounts WHERE disabled = 0 AND removed_at IS NULL`, nil, &enabled); err != nil {
		return nil, 0, fmt.Errorf("count accounts: %w", err)
	}
	return nil, int(enabled), nil
}

// Global reads the global bucket, locked for the claim where rows are
// locked (SQLite's one writer holds it already).
func (c Common) Global(ctx context.Context) (driver.GlobalBucket, error) {
	var (
		g             driver.GlobalBucket
		on, burst, at int64
	)
	query := `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`
	if c.d == dialect.Postgres {
		query += ` FOR UPDATE`
	}
	found, err := c.row(ctx, query, nil, &on, &g.Limit.Rate, &burst, &g.Bucket.Tokens, &at)
	if err == nil && !found {
		err = errors.New("no row") // every database is made with one
	}
	if err != nil {
		return g, fmt.Errorf("read global limit: %w", err)
	}
	g.On, g.Limit.Burst, g.Bucket.At = on != 0, int(burst), rowscan.FromNanos(at)
	return g, nil
}

func (c Common) SpendTokens(ctx context.Context, accountID int64, b ratelimit.Bucket, used int) error {
	if err := c.exec(ctx, `UPDATE accounts SET tokens = ?1, tokens_at = ?2, used_today = ?3 WHERE id = ?4`,
		b.Tokens, rowscan.Nanos(b.At), used, accountID); err != nil {
		return fmt.Errorf("spend tokens of account %d: %w", accountID, err)
	}
	return nil
}

func (c Common) SpendGlobal(ctx context.Context, b ratelimit.Bucket) error {
	if err := c.exec(ctx, `UPDATE global_limit SET tokens = ?1, tokens_at = ?2 WHERE id = 1`, b.Tokens, rowscan.Nanos(b.At)); err != nil {
		return fmt.Errorf("spend global tokens: %w", err)
	}
	return nil
}

func (c Common) CountSends(ctx context.Context, accountID int64, n int) error {
	if err := c.exec(ctx, `UPDATE accounts SET used_today = used_today + ?1 WHERE id = ?2`, n, accountID); err != nil {
		return fmt.Errorf("count sends of account %d: %w", accountID, err)
	}
	return nil
}

// LastContacts looks numbers up in the send log, in one query: one row per
// account that ever messaged a number, a handful each, its accepted sends
// read from the attempts it names (readSent). The map is nil when none was
// found.
func (c Common) LastContacts(ctx context.Context, phones []string) (map[string]driver.LastContact, error) {
	var out map[string]driver.LastContact // nil until a number is found: most are new
	if len(phones) == 0 {
		return out, nil
	}
	var (
		from, where string
		args        []any
	)
	if c.d == dialect.Postgres {
		from = `contact_log`
		where, args = in(c.d, "phone", 1, phones, nil)
		where = ` WHERE contact_log.` + where
		// Planned at each call with its phones, so that a scan of the log
		// looks each row up in a hash of them. A prepared statement's
		// generic plan, made after five calls while the log held a few rows
		// (a new database: no statistics), stays for the session, and its
		// scan compares every row with every phone: 41 ms a claim at 20,000
		// rows, 1 ms planned each time.
		args = append([]any{PlanEachCall}, args...)
	} else {
		// The numbers as a VALUES list joined to the log, read in turn (a
		// co-routine), each probing its key: an IN list was a temporary
		// b-tree built at every claim. A number twice finds its rows twice,
		// the same rows. Padded (no number is empty), as the IN list was.
		n := Padded(len(phones))
		args = make([]any, n)
		for i := range args {
			if args[i] = ""; i < len(phones) {
				args[i] = phones[i]
			}
		}
		from = `(VALUES ` + values(n) + `) v CROSS JOIN contact_log ON contact_log.phone = v.column1`
	}
	err := c.each(ctx, func(rows Rows) error {
		var (
			phone      string
			account    int64
			at, sentAt int64
		)
		if err := rows.Scan(&phone, &account, &at, &sentAt); err != nil {
			return err
		}
		if out == nil {
			out = make(map[string]driver.LastContact, len(phones))
		}
		lc := out[phone]
		if lc.ByAccount == nil {
			lc.ByAccount = map[int64]time.Time{}
		}
		last := rowscan.FromNanos(at)
		lc.ByAccount[account] = last
		if last.After(lc.At) {
			lc.At = last
		}
		if sent := rowscan.FromNanos(sentAt); sentAt > 0 && sent.After(lc.SentAt) {
			lc.SentAt, lc.Account = sent, account
		}
		out[phone] = lc
		return nil
	}, `SELECT contact_log.phone, contact_log.account_id, contact_log.last_at, `+readSent(c.d, from)+where, args...)
	if err != nil {
		return nil, fmt.Errorf("look up the send log: %w", err)
	}
	return out, nil
}

func (c Common) Fate(ctx context.Context, campaignID, accountID int64, phoneNumberID string) (driver.AccountFate, error) {
	const fate = `SELECT disabled, removed_at IS NOT NULL,
		EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = ?1 AND account_id = accounts.id) FROM accounts `
	f := driver.AccountFate{Found: true}
	var (
		disabled int64
		found    bool
		err      error
	)
	if accountID != 0 {
		found, err = c.row(ctx, fate+`WHERE id = ?2`, []any{campaignID, accountID}, &disabled, &f.Removed, &f.Dropped)
	} else {
		found, err = c.row(ctx, fate+`WHERE phone_number_id = ?2 ORDER BY removed_at IS NULL DESC, id DESC LIMIT 1`,
			[]any{campaignID, phoneNumberID}, &disabled, &f.Removed, &f.Dropped)
	}
	switch {
	case err != nil:
		return f, fmt.Errorf("read the account of %d/%s: %w", accountID, phoneNumberID, err)
	case !found:
		return driver.AccountFate{}, nil
	}
	f.Disabled = disabled != 0
	return f, nil
}

func (c Common) NoteGateWait(ctx context.Context, id int64, now time.Time, reason campaign.WaitReason, detail string) error {
	if err := c.exec(ctx, `INSERT INTO gate_waits (campaign_id, since, seen, reason, error) VALUES (?1, ?2, ?2, ?3, ?4)
		ON CONFLICT (campaign_id) DO UPDATE SET seen = excluded.seen, reason = excluded.reason, error = excluded.error`,
		id, now.UnixNano(), string(reason), detail); err != nil {
		return fmt.Errorf("campaign %d: note the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c Common) ClearGateWait(ctx context.Context, id int64) error {
	if err := c.exec(ctx, `DELETE FROM gate_waits WHERE campaign_id = ?1`, id); err != nil {
		return fmt.Errorf("campaign %d: clear the wait for shared limits: %w", id, err)
	}
	return nil
}

func (c Common) QueuedRefunds(ctx context.Context, max int) ([]campaign.SharedClaim, error) {
	var queued []campaign.SharedClaim
	err := c.each(ctx, func(rows Rows) error {
		var sc campaign.SharedClaim
		if err := rows.Scan(&sc.ID, &sc.Portfolio, &sc.Account, &sc.Day); err != nil {
			return err
		}
		queued = append(queued, sc)
		return nil
	}, `SELECT claim, portfolio, account, day FROM gate_refunds ORDER BY at LIMIT ?1`, max)
	if err != nil {
		return nil, fmt.Errorf("read queued refunds: %w", err)
	}
	return queued, nil
}

func (c Common) ForgetRefund(ctx context.Context, claim string) error {
	if err := c.exec(ctx, `DELETE FROM gate_refunds WHERE claim = ?1`, claim); err != nil {
		return fmt.Errorf("forget the refund of %s: %w", claim, err)
	}
	return nil
}
