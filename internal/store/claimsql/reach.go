package claimsql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// A portfolio's reach as the claim and the status read it: the running
// count of distinct recipients (reach_counts: SQLite's migration 0040,
// Postgres's 0005, each kept by its triggers) moved to the instant read.
// SQLite reads each account's window index in turn; Postgres reads the
// members in one statement.

// ReachCount is how many distinct recipients the scope's accounts messaged
// after since, from its running count: the count at its `through` less
// the recipients whose latest send lies between, so a read costs the
// sends that left the window since the last one, not the window. The
// count moved to since is stored. A missing count, or one more than a
// window away, is counted from the log.
func (c Common) ReachCount(ctx context.Context, s driver.ReachScope, since time.Time) (int, error) {
	return c.reachCount(ctx, s, since, true)
}

// PeekReach is ReachCount storing nothing: for a reader that may not write.
func (c Common) PeekReach(ctx context.Context, s driver.ReachScope, since time.Time) (int, error) {
	return c.reachCount(ctx, s, since, false)
}

func (c Common) reachCount(ctx context.Context, s driver.ReachScope, since time.Time, store bool) (int, error) {
	if len(s.Members) == 0 {
		return 0, nil
	}
	var (
		used, through, k int64
		at               = rowscan.Nanos(since)
	)
	// The recipients who left the window since the count's through are
	// counted in the read, when the count is behind by less than a window:
	// the usual move, a statement less.
	left, largs := c.leftSQL(s.Members, "reach_counts.through", "?3", 5)
	found, err := c.row(ctx, `SELECT used, through, CASE WHEN through < ?3 AND ?3 - through < ?4 THEN `+left+` ELSE 0 END
		FROM reach_counts WHERE portfolio_id = ?1 AND account_id = ?2`,
		append([]any{s.Portfolio, s.Account, at, int64(ratelimit.ReachWindow)}, largs...), &used, &through, &k)
	switch {
	case err != nil:
		return 0, fmt.Errorf("read the portfolio's reach: %w", err)
	case !found || max(at-through, through-at) >= int64(ratelimit.ReachWindow):
		n, err := c.countWindow(ctx, s.Members, at)
		if err != nil || !store || at < through {
			return n, err
		}
		if err := c.exec(ctx, `INSERT INTO reach_counts (portfolio_id, account_id, used, through) VALUES (?1, ?2, ?3, ?4)
			ON CONFLICT (portfolio_id, account_id) DO UPDATE SET used = excluded.used, through = excluded.through`,
			s.Portfolio, s.Account, n, at); err != nil {
			return 0, fmt.Errorf("store the portfolio's reach: %w", err)
		}
		return n, nil
	case at == through:
		return int(used), nil
	case at < through:
		// A claim whose instant was taken before another's committed:
		// the recipients who left the window in between are still in.
		k, err := c.leftBetween(ctx, s.Members, at, through)
		return int(used) + k, err
	}
	if !store {
		return int(used) - int(k), nil
	}
	if err := c.exec(ctx, `UPDATE reach_counts SET used = used - ?1, through = ?2 WHERE portfolio_id = ?3 AND account_id = ?4`,
		k, at, s.Portfolio, s.Account); err != nil {
		return 0, fmt.Errorf("store the portfolio's reach: %w", err)
	}
	return int(used) - int(k), nil
}

// KeepReach moves the scope's running count to since, as ReachCount does,
// for a claim that does not read it (a portfolio without a limit: status
// reads the counts claims keep). On SQLite the usual move, less than a
// window, is one UPDATE where ReachCount reads twice first; Postgres,
// whose claim queues its writes and cannot tell whether one matched,
// reads as ReachCount does.
func (c Common) KeepReach(ctx context.Context, s driver.ReachScope, since time.Time) error {
	if len(s.Members) == 0 {
		return nil
	}
	if c.d != dialect.Postgres {
		at := rowscan.Nanos(since)
		left, largs := c.leftSQL(s.Members, "reach_counts.through", "?1", 5)
		n, err := c.tx.Exec(ctx, `UPDATE reach_counts SET used = used - `+left+`, through = ?1
			WHERE portfolio_id = ?2 AND account_id = ?3 AND through < ?1 AND ?1 - through < ?4`,
			append([]any{at, s.Portfolio, s.Account, int64(ratelimit.ReachWindow)}, largs...)...)
		if err != nil {
			return fmt.Errorf("store the portfolio's reach: %w", err)
		}
		if n == 1 {
			return nil
		}
	}
	_, err := c.ReachCount(ctx, s, since)
	return err
}

// readerMoveAfter is how far behind since a reader finds a running count
// before it stores the count moved on: a portfolio whose claims stopped
// would otherwise have every status read again all the sends that left
// the window since the last claim (up to a day of them).
const readerMoveAfter = time.Minute

// ReachStale reports whether the scope's running count is missing, a
// window or more from since (a read would count the window from the log),
// or more than a minute behind it: a reader that may write then stores it
// (ReachCount) rather than read it (PeekReach).
func (c Common) ReachStale(ctx context.Context, s driver.ReachScope, since time.Time) (bool, error) {
	var through int64
	found, err := c.row(ctx, `SELECT through FROM reach_counts WHERE portfolio_id = ?1 AND account_id = ?2`,
		[]any{s.Portfolio, s.Account}, &through)
	switch {
	case err != nil:
		return false, fmt.Errorf("read the portfolio's reach: %w", err)
	case !found:
		return len(s.Members) > 0, nil
	}
	at := rowscan.Nanos(since)
	return max(at-through, through-at) >= int64(ratelimit.ReachWindow) || at-through > int64(readerMoveAfter), nil
}

// countWindow counts the distinct recipients the accounts messaged after
// since (ns) from the send log: the whole window, once per count built.
func (c Common) countWindow(ctx context.Context, members []int64, since int64) (int, error) {
	where, args := in(c.d, "account_id", 2, members, nil)
	// One number logs each recipient once: no need to tell them apart.
	what := "count(DISTINCT phone)"
	if len(members) == 1 {
		what = "count(*)"
	}
	var n int64
	if _, err := c.row(ctx, `SELECT `+what+` FROM contact_log WHERE `+where+` AND last_at > ?1`,
		append([]any{since}, args...), &n); err != nil {
		return 0, fmt.Errorf("count the portfolio's recipients: %w", err)
	}
	return int(n), nil
}

// leftBetween counts the recipients whose latest send from any of the
// accounts lies in (from, to] (ns).
func (c Common) leftBetween(ctx context.Context, members []int64, from, to int64) (int, error) {
	left, args := c.leftSQL(members, "?1", "?2", 3)
	var n int64
	if _, err := c.row(ctx, `SELECT `+left, append([]any{from, to}, args...), &n); err != nil {
		return 0, fmt.Errorf("count the recipients who left the portfolio's window: %w", err)
	}
	return int(n), nil
}

// leftSQL is an expression that counts the recipients whose latest send
// from any of the members lies in (from, to] (SQL expressions): each is
// counted at the account that sent it last (the lowest id of a tie). Its
// placeholders start at first. SQLite reads each account's window index
// in turn, a subquery each; Postgres reads the members in one.
func (c Common) leftSQL(members []int64, from, to string, first int) (string, []any) {
	const sentLast = ` AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id <> c.account_id
		AND (o.last_at > c.last_at OR (o.last_at = c.last_at AND o.account_id < c.account_id)) AND `
	left := `(SELECT count(*) FROM contact_log c WHERE c.last_at > ` + from + ` AND c.last_at <= ` + to + ` AND `
	if c.d == dialect.Postgres {
		at := "?" + strconv.Itoa(first)
		q := left + `c.account_id = ANY(` + at + `)`
		if len(members) > 1 {
			q += sentLast + `o.account_id = ANY(` + at + `))`
		}
		return q + `)`, []any{members}
	}
	// The members' ids are the arguments, once: each subquery names its
	// own, and the others' IN list all of them.
	others, args := in(c.d, "o.account_id", first, members, nil)
	var b strings.Builder
	b.WriteString("(")
	for i := range members {
		if i > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(left + `c.account_id = ?` + strconv.Itoa(first+i))
		if len(members) > 1 {
			b.WriteString(sentLast + others + `)`)
		}
		b.WriteString(")")
	}
	b.WriteString(")")
	return b.String(), args
}

// ReachOldest is the oldest of the latest sends to the recipients the
// accounts messaged after since: when it leaves, there is room again.
// Each account's window index gives its oldest send that is the
// recipient's latest, in a step or a few.
func (c Common) ReachOldest(ctx context.Context, members []int64, since time.Time) (time.Time, error) {
	const latest = ` AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.last_at > c.last_at AND `
	// SQLite stops at an account's first row that qualifies; Postgres
	// takes the least of all members'.
	what, order := `c.last_at`, ` ORDER BY c.last_at LIMIT 1`
	if c.d == dialect.Postgres {
		what, order = `min(c.last_at)`, ``
	}
	var oldest int64
	for _, one := range c.eachMember(members, 2) {
		query, args := `SELECT `+what+` FROM contact_log c WHERE c.last_at > ?1 AND `+one.where, []any{rowscan.Nanos(since), one.arg}
		if len(members) > 1 {
			query += latest + one.others + `)`
			args = append(args, one.otherArgs...)
		}
		query += order
		var at *int64
		if _, err := c.row(ctx, query, args, &at); err != nil {
			return time.Time{}, fmt.Errorf("find the portfolio's oldest recipient: %w", err)
		}
		if at != nil && (oldest == 0 || *at < oldest) {
			oldest = *at
		}
	}
	return rowscan.FromNanos(oldest), nil
}

// member is one step of a read over a portfolio's accounts: where picks
// the step's accounts of the send log c (its argument arg), others the
// portfolio's of o (otherArgs, after arg).
type member struct {
	where     string
	arg       any
	others    string
	otherArgs []any
}

// eachMember are the steps of a read over members whose placeholders start
// at first: one per account on SQLite, whose window index serves one
// account at a time; one for all on Postgres.
func (c Common) eachMember(members []int64, first int) []member {
	at := "?" + strconv.Itoa(first)
	if c.d == dialect.Postgres {
		return []member{{where: `c.account_id = ANY(` + at + `)`, arg: members, others: `o.account_id = ANY(` + at + `)`}}
	}
	others, args := in(c.d, "o.account_id", first+1, members, nil)
	out := make([]member, len(members))
	for i, id := range members {
		out[i] = member{where: `c.account_id = ` + at, arg: id, others: others, otherArgs: args}
	}
	return out
}
