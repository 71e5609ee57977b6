// Package tierrecord reads warm-up's record from the database: the auto-tier
// accounts and each one's requests by quota day since its tier began. The
// quota reset's promotion reads it inside its transaction, `account
// history` and status through the read models (readmodel.TierProgress):
// one query for both. Its SQL is portable: through the read models it runs
// on Postgres too, rebound to Postgres's placeholders.
package tierrecord

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// Querier is a database handle or a transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// minuteNanos is the resolution of the attempt rollups (migration 0010) and of
// tier_minutes (migration 0046), in ns.
const minuteNanos = int64(time.Minute)

// Account is an auto-tier account as warm-up judges it.
type Account struct {
	ID           int64
	Name, Tier   string
	Since        time.Time
	PromoteAfter time.Duration
	DailyCap     int    // the tier's
	Quality      string // from the last sync, "" when never read
}

// AccountsSQL reads the live auto-tier accounts (ScanAccount) on either
// driver: a condition on a (`AND a.id = ?`) and the order follow.
const AccountsSQL = `SELECT a.id, a.name, a.tier, a.tier_since, a.promote_after, t.daily_cap, a.quality_rating
	FROM accounts a JOIN tiers t ON t.name = a.tier
	WHERE a.auto_tier = 1 AND a.removed_at IS NULL AND a.disabled = 0 `

// ScanAccount reads a row of AccountsSQL.
func ScanAccount(sc rowscan.Scanner) (a Account, err error) {
	var since, after int64
	err = sc.Scan(&a.ID, &a.Name, &a.Tier, &since, &after, &a.DailyCap, &a.Quality)
	a.Since, a.PromoteAfter = rowscan.FromNanos(since), time.Duration(after)
	return a, err
}

// Accounts reads the live auto-tier accounts, by id; where is appended
// (`AND a.id = ?`).
func Accounts(ctx context.Context, q Querier, where string, args ...any) ([]Account, error) {
	rows, err := q.QueryContext(ctx, AccountsSQL+where+` ORDER BY a.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read auto-tier accounts: %w", err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := ScanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("read auto-tier accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Days are an account's requests since a time, by quota day in loc,
// as campaign.DaysOf sums them from the attempts. Whole minutes come from
// the counts kept by minute (attempt_rollup's requests and sent answers,
// less tier_minutes' claims put back without a request, plus its failures
// and restrictions): a few rows a minute, not one per request. The part
// minute after since, and any minute a quota day's edge cuts (a zone whose
// offset is not whole minutes), are counted from the attempts.
func Days(ctx context.Context, q Querier, id int64, since time.Time, loc *time.Location) ([]campaign.DayStats, error) {
	from := since.UnixNano()
	first := from / minuteNanos // the first whole minute at or after since
	if first*minuteNanos < from {
		first++
	}
	days := map[string]*campaign.DayStats{}
	day := func(d string) *campaign.DayStats {
		s := days[d]
		if s == nil {
			s = &campaign.DayStats{Day: d}
			days[d] = s
		}
		return s
	}
	var dc dayCache
	// The minutes read from the attempts instead, as [from, to) in ns.
	type span struct{ from, to int64 }
	raw := []span{{from, first * minuteNanos}}
	rows, err := q.QueryContext(ctx, `WITH
		r AS (SELECT minute, sum(attempts) AS attempts, sum(sent) AS sent FROM attempt_rollup
			WHERE account_id = ?1 AND minute >= ?2 GROUP BY minute),
		k AS (SELECT minute, sum(not_sent) AS not_sent, sum(not_sent_sent) AS not_sent_sent,
			sum(failed) AS failed, sum(restricted) AS restricted FROM tier_minutes
			WHERE account_id = ?1 AND minute >= ?2 GROUP BY minute)
		SELECT r.minute, r.attempts - coalesce(k.not_sent, 0), r.sent - coalesce(k.not_sent_sent, 0),
			coalesce(k.failed, 0), coalesce(k.restricted, 0)
		FROM r LEFT JOIN k ON k.minute = r.minute`, id, first)
	if err != nil {
		return nil, fmt.Errorf("read requests by minute: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var minute int64
		var m campaign.DayStats
		if err := rows.Scan(&minute, &m.Requests, &m.Sent, &m.Failed, &m.Restricted); err != nil {
			return nil, err
		}
		start := minute * minuteNanos
		d, ok := dc.dayOf(start, start+minuteNanos, loc)
		if !ok {
			raw = append(raw, span{start, start + minuteNanos})
			continue
		}
		s := day(d)
		s.Requests += m.Requests
		s.Sent += m.Sent
		s.Failed += m.Failed
		s.Restricted += m.Restricted
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, r := range raw {
		if r.from >= r.to {
			continue
		}
		if d, ok := dc.dayOf(r.from, r.to, loc); ok {
			if err := sumAttempts(ctx, q, id, r.from, r.to, day(d)); err != nil {
				return nil, err
			}
			continue
		}
		reqs, err := readAttempts(ctx, q, id, r.from, r.to)
		if err != nil {
			return nil, err
		}
		for _, s := range campaign.DaysOf(reqs, loc) {
			t := day(s.Day)
			t.Requests += s.Requests
			t.Sent += s.Sent
			t.Failed += s.Failed
			t.Restricted += s.Restricted
		}
	}
	out := make([]campaign.DayStats, 0, len(days))
	for _, s := range days {
		// DaysOf has a day only for a request: a minute of claims all
		// put back adds none.
		if s.Requests != 0 {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b campaign.DayStats) int { return cmp.Compare(a.Day, b.Day) })
	return out, nil
}

// dayCache remembers the last stretch of time known to lie in one quota
// day, so that a month of minutes costs a few zone look-ups.
type dayCache struct {
	from, to int64 // ns, [from, to)
	day      string
}

// dayOf is the quota day in loc of every instant in [from, to) (ns), ok
// false when they are not all on one day.
func (c *dayCache) dayOf(from, to int64, loc *time.Location) (string, bool) {
	if c.day != "" && c.from <= from && to <= c.to {
		return c.day, true
	}
	t := time.Unix(0, from).In(loc)
	d := t.Format(time.DateOnly)
	// Up to the next midnight, or the zone's next change if sooner: on a
	// fixed offset the local date only moves forward, so the stretch's
	// last instant being on d puts the whole stretch on d.
	y, m, dd := t.Date()
	end := time.Date(y, m, dd+1, 0, 0, 0, 0, loc).UnixNano()
	if _, zoneEnd := t.ZoneBounds(); !zoneEnd.IsZero() && zoneEnd.UnixNano() < end {
		end = zoneEnd.UnixNano()
	}
	if end <= from || time.Unix(0, end-1).In(loc).Format(time.DateOnly) != d {
		return "", false
	}
	c.from, c.to, c.day = from, end, d
	return d, to <= end
}

// sumAttempts adds the account's requests claimed in [from, to) (ns) to s,
// summed as campaign.DaysOf sums them.
func sumAttempts(ctx context.Context, q Querier, id, from, to int64, s *campaign.DayStats) error {
	var m campaign.DayStats
	if err := q.QueryRowContext(ctx, `SELECT
		count(CASE WHEN coalesce(class, '') <> 'not-sent' THEN 1 END),
		count(CASE WHEN coalesce(class, '') <> 'not-sent' AND outcome = 'sent' THEN 1 END),
		count(CASE WHEN class = 'permanent' AND coalesce(outcome, '') <> 'sent' THEN 1 END),
		count(CASE WHEN coalesce(class, '') <> 'not-sent' AND coalesce(error_code, 0) IN (131048, 131064) THEN 1 END)
		FROM attempts WHERE account_id = ? AND claimed_at >= ? AND claimed_at < ?`, id, from, to).
		Scan(&m.Requests, &m.Sent, &m.Failed, &m.Restricted); err != nil {
		return fmt.Errorf("read requests: %w", err)
	}
	s.Requests += m.Requests
	s.Sent += m.Sent
	s.Failed += m.Failed
	s.Restricted += m.Restricted
	return nil
}

// readAttempts reads the account's requests claimed in [from, to) (ns),
// for a stretch a quota day's edge cuts.
func readAttempts(ctx context.Context, q Querier, id, from, to int64) ([]campaign.TierRequest, error) {
	rows, err := q.QueryContext(ctx, `SELECT claimed_at, coalesce(outcome, ''), coalesce(class, ''), coalesce(error_code, 0)
		FROM attempts WHERE account_id = ? AND claimed_at >= ? AND claimed_at < ?`, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	defer rows.Close()
	var reqs []campaign.TierRequest
	for rows.Next() {
		var (
			r  campaign.TierRequest
			at int64
		)
		if err := rows.Scan(&at, &r.Outcome, &r.Class, &r.ErrorCode); err != nil {
			return nil, err
		}
		r.At = rowscan.FromNanos(at)
		reqs = append(reqs, r)
	}
	return reqs, rows.Err()
}
