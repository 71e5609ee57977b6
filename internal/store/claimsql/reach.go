package claimsql

import (
	"context"
	"fmt"
	"strconv"
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
		used, through int64
		at            = rowscan.Nanos(since)
	)
	found, err := c.row(ctx, `SELECT used, through FROM reach_counts WHERE portfolio_id = ?1 AND account_id = ?2`,
		[]any{s.Portfolio, s.Account}, &used, &through)
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
	k, err := c.leftBetween(ctx, s.Members, through, at)
	if err != nil || !store {
		return int(used) - k, err
	}
	if err := c.exec(ctx, `UPDATE reach_counts SET used = used - ?1, through = ?2 WHERE portfolio_id = ?3 AND account_id = ?4`,
		k, at, s.Portfolio, s.Account); err != nil {
		return 0, fmt.Errorf("store the portfolio's reach: %w", err)
	}
	return int(used) - k, nil
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
// accounts lies in (from, to] (ns): each is counted at the account that
// sent it last (the lowest id of a tie). SQLite reads each account's
// window index in turn.
func (c Common) leftBetween(ctx context.Context, members []int64, from, to int64) (int, error) {
	const left = `SELECT count(*) FROM contact_log c WHERE c.last_at > ?1 AND c.last_at <= ?2 AND `
	const sentLast = ` AND NOT EXISTS (SELECT 1 FROM contact_log o WHERE o.phone = c.phone AND o.account_id <> c.account_id
		AND (o.last_at > c.last_at OR (o.last_at = c.last_at AND o.account_id < c.account_id)) AND `
	total := 0
	for _, one := range c.eachMember(members, 3) {
		query, args := left+one.where, []any{from, to, one.arg}
		if len(members) > 1 {
			query += sentLast + one.others + `)`
			args = append(args, one.otherArgs...)
		}
		var n int64
		if _, err := c.row(ctx, query, args, &n); err != nil {
			return 0, fmt.Errorf("count the recipients who left the portfolio's window: %w", err)
		}
		total += int(n)
	}
	return total, nil
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
