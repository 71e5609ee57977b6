package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// hostPart is this database's part of a portfolio's lost quota day, as
// limits.Gate.Rebuild takes it: each of its accounts' count of its own
// quota day, the recipients they messaged in the last 24 h (the reach
// window, the pair gap, the sticky number), and the repeat guards of the
// messages they sent or have in flight (or whose fate is unknown) in that
// time.
func hostPart(ctx context.Context, q querier, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	r := limits.RebuildRequest{Host: host, Today: today, Now: now}
	accts, err := loadAccounts(ctx, q, `ORDER BY a.id`)
	if err != nil {
		return r, err
	}
	var ids []any
	for _, a := range accts {
		p := driver.DefaultPortfolio
		if a.portfolioID != 0 {
			p = a.Portfolio
		}
		if p != portfolio {
			continue
		}
		ids = append(ids, a.ID)
		r.Accounts = append(r.Accounts, limits.RebuildCount{Account: driver.GateAccount(a.PhoneNumberID), Day: a.QuotaDay, Used: a.UsedToday})
	}
	if len(ids) == 0 {
		return r, nil
	}
	in := "(" + placeholders(len(ids)) + ")"
	cutoff := now.Add(-ratelimit.ReachWindow).UnixNano()
	rows, err := q.QueryContext(ctx, `SELECT c.phone, a.phone_number_id, max(c.last_at) FROM contact_log c
		JOIN accounts a ON a.id = c.account_id WHERE c.account_id IN `+in+` AND c.last_at > ? GROUP BY c.phone`, append(ids, cutoff)...)
	if err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	for rows.Next() {
		var (
			c  limits.RebuildContact
			at int64
		)
		if err := rows.Scan(&c.Recipient, &c.Account, &at); err != nil {
			rows.Close()
			return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
		}
		c.At, c.Account = fromNanos(at), driver.GateAccount(c.Account)
		r.Window = append(r.Window, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	rows, err = q.QueryContext(ctx, `SELECT phone, campaign_id, max(updated_at) FROM messages
		WHERE account_id IN `+in+` AND state IN ('sent', 'sending', 'unknown') AND updated_at > ?
		GROUP BY phone, campaign_id`, append(ids, now.Add(-limits.GuardWindow).UnixNano())...)
	if err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	type sentTo struct {
		phone    string
		campaign int64
		at       int64
	}
	var sent []sentTo
	for rows.Next() {
		var m sentTo
		if err := rows.Scan(&m.phone, &m.campaign, &m.at); err != nil {
			rows.Close()
			return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
		}
		sent = append(sent, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	guards := map[int64]string{}
	for _, m := range sent {
		g, ok := guards[m.campaign]
		if !ok {
			if g, err = repeatGuard(ctx, q, m.campaign); err != nil {
				return r, err
			}
			guards[m.campaign] = g
		}
		r.Guards = append(r.Guards, limits.RebuildGuard{Recipient: m.phone, Guard: g, At: fromNanos(m.at)})
	}
	return r, nil
}

// HostPart is this database's part of portfolio's lost quota day on today
// (see hostPart), as this host among those sharing limits: what a forced
// quota reset rebuilds the day from.
func (s *Store) HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error) {
	host, err := limitsHost(ctx, s)
	if err != nil {
		return limits.RebuildRequest{}, err
	}
	return hostPart(ctx, s.db, host, portfolio, today, s.now())
}
