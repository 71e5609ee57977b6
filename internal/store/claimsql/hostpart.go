package claimsql

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// HostPart is the database's part of a portfolio's lost quota day, as
// limits.Gate.Rebuild takes it: each of its accounts' count of its own
// quota day, the recipients they messaged in the last 24 h (the reach
// window, the pair gap, the sticky number; each at the number that
// messaged it last), and the repeat guards of the messages they sent or
// have in flight (or whose fate is unknown) in that time.
func (c Common) HostPart(ctx context.Context, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error) {
	r := limits.RebuildRequest{Host: host, Today: today, Now: now}
	// An account without a portfolio is in the gates' default one.
	accts, err := c.tx.Accounts(ctx, c.bind(`WHERE coalesce(p.name, ?2) = ?3 ORDER BY a.id`), driver.DefaultPortfolio, portfolio)
	if err != nil || len(accts) == 0 {
		return r, err
	}
	ids := make([]int64, len(accts))
	for i, a := range accts {
		ids[i] = a.ID
		r.Accounts = append(r.Accounts, limits.RebuildCount{Account: driver.GateAccount(a.PhoneNumberID), Day: a.QuotaDay, Used: a.UsedToday})
	}
	// Each recipient's latest send comes first: the rest are passed over.
	where, args := in(c.d, "c.account_id", 2, ids, nil)
	err = c.each(ctx, func(rows Rows) error {
		var (
			rc      limits.RebuildContact
			account string
			at      int64
		)
		if err := rows.Scan(&rc.Recipient, &account, &at); err != nil {
			return err
		}
		if n := len(r.Window); n == 0 || r.Window[n-1].Recipient != rc.Recipient {
			rc.At, rc.Account = rowscan.FromNanos(at), driver.GateAccount(account)
			r.Window = append(r.Window, rc)
		}
		return nil
	}, `SELECT c.phone, a.phone_number_id, c.last_at FROM contact_log c JOIN accounts a ON a.id = c.account_id
		WHERE `+where+` AND c.last_at > ?1 ORDER BY c.phone, c.last_at DESC`,
		append([]any{now.Add(-ratelimit.ReachWindow).UnixNano()}, args...)...)
	if err != nil {
		return r, fmt.Errorf("read the send log of portfolio %s: %w", portfolio, err)
	}
	where, args = in(c.d, "m.account_id", 2, ids, nil)
	err = c.each(ctx, func(rows Rows) error {
		var (
			g                    limits.RebuildGuard
			kind, template, text string
			at                   int64
		)
		if err := rows.Scan(&g.Recipient, &kind, &template, &text, &at); err != nil {
			return err
		}
		g.Guard, g.At = campaign.RepeatGuard(campaign.MessageKind(kind), template, text), rowscan.FromNanos(at)
		r.Guards = append(r.Guards, g)
		return nil
	}, `SELECT m.phone, c.kind, c.template, c.text, max(m.updated_at) FROM messages m
		JOIN campaigns c ON c.id = m.campaign_id
		WHERE `+where+` AND m.state IN ('sent', 'sending', 'unknown') AND m.updated_at > ?1
		GROUP BY m.phone, m.campaign_id, c.kind, c.template, c.text ORDER BY m.phone, m.campaign_id`,
		append([]any{now.Add(-limits.GuardWindow).UnixNano()}, args...)...)
	if err != nil {
		return r, fmt.Errorf("read the messages of portfolio %s: %w", portfolio, err)
	}
	return r, nil
}
