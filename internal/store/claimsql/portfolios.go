package claimsql

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// ReadLimit is the messaging limit last read for an account's portfolio:
// its own for an account without one, else the latest any of its numbers
// read; from names the account it was read through (zero values: never
// read).
func (c Common) ReadLimit(ctx context.Context, a rowscan.Account) (limit int, from string, at time.Time, err error) {
	if a.PortfolioID == 0 {
		return a.Synced.MessagingLimit, a.Name, a.Synced.At, nil
	}
	var read, nanos int64
	if _, err := c.row(ctx, `SELECT messaging_limit_read, name, synced_at FROM accounts
		WHERE portfolio_id = ?1 AND messaging_limit_read IS NOT NULL AND synced_at IS NOT NULL
		ORDER BY synced_at DESC LIMIT 1`, []any{a.PortfolioID}, &read, &from, &nanos); err != nil {
		return 0, "", time.Time{}, fmt.Errorf("read the messaging limit of portfolio %s: %w", a.Portfolio, err)
	}
	return int(read), from, rowscan.FromNanos(nanos), nil
}

// ReachLimit is the messaging limit of a's portfolio that applies (0:
// none).
func (c Common) ReachLimit(ctx context.Context, a driver.ClaimAccount) (int, error) {
	read, _, _, err := c.ReadLimit(ctx, rowscan.Account{AccountStatus: a.AccountStatus, PortfolioID: a.PortfolioID})
	return campaign.EffectiveLimit(a.PinnedLimit, read), err
}

// Members are the ids of every account of a portfolio, removed and
// disabled ones too.
func (c Common) Members(ctx context.Context, portfolioID int64) ([]int64, error) {
	var ids []int64
	err := c.each(ctx, func(rows Rows) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	}, `SELECT id FROM accounts WHERE portfolio_id = ?1`, portfolioID)
	if err != nil {
		return nil, fmt.Errorf("read portfolio members: %w", err)
	}
	return ids, nil
}

// ReachReader is how a driver reads a listed portfolio's used reach: its
// running count moved to since (Common.ReachCount, or a reader's way).
type ReachReader func(ctx context.Context, s driver.ReachScope, since time.Time) (int, error)

// Portfolios are every portfolio, by name, then every account without one
// as a portfolio of its own, with the reach each has used at now, read
// through used.
func (c Common) Portfolios(ctx context.Context, now time.Time, used ReachReader) ([]campaign.PortfolioStatus, error) {
	byName := `ORDER BY ` + c.d.Bytewise("name")
	var out []campaign.PortfolioStatus
	err := c.each(ctx, func(rows Rows) error {
		var (
			p       campaign.PortfolioStatus
			pinned  *int64
			created int64
		)
		if err := rows.Scan(&p.ID, &p.Name, &pinned, &p.Margin, &created); err != nil {
			return err
		}
		if pinned != nil {
			p.PinnedLimit = int(*pinned)
		}
		p.CreatedAt = rowscan.FromNanos(created)
		out = append(out, p)
		return nil
	}, `SELECT id, name, pinned_limit, margin, created_at FROM portfolios `+byName)
	if err != nil {
		return nil, fmt.Errorf("list portfolios: %w", err)
	}
	accts, err := c.tx.Accounts(ctx, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	byID := map[int64]int{}
	for i := range out {
		byID[out[i].ID] = i
	}
	for _, a := range accts {
		if a.PortfolioID == 0 {
			out = append(out, campaign.PortfolioStatus{Own: true, Accounts: []string{a.Name},
				Portfolio: campaign.Portfolio{Name: a.Name, Margin: driver.DefaultMargin}})
			continue
		}
		p := &out[byID[a.PortfolioID]]
		p.Accounts = append(p.Accounts, a.Name)
	}
	for i := range out {
		if err := c.portfolioReach(ctx, &out[i], accts, now, used); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// portfolioReach fills in a listed portfolio's limit, members and the reach
// they used in the window before now. The limit is the first live
// account's (each account of a portfolio reads the same); a portfolio
// without live accounts has its pin, and its removed accounts may still
// have sent within the window.
func (c Common) portfolioReach(ctx context.Context, p *campaign.PortfolioStatus, accts []rowscan.Account, now time.Time,
	used ReachReader) error {
	p.Limit, p.At = p.PinnedLimit, now
	margin, scope := p.Margin, driver.ReachScope{Portfolio: p.ID}
	for _, a := range accts {
		if (p.Own && a.Name == p.Name) || (!p.Own && a.PortfolioID == p.ID) {
			read, from, at, err := c.ReadLimit(ctx, a)
			if err != nil {
				return err
			}
			p.Limit, margin = campaign.EffectiveLimit(a.PinnedLimit, read), a.Margin
			p.ReadLimit, p.ReadFrom, p.ReadAt = read, from, at
			if p.Own {
				scope = driver.ReachScope{Account: a.ID}
				p.Members = []int64{a.ID}
			}
			break
		}
	}
	if !p.Own {
		var err error
		if p.Members, err = c.Members(ctx, p.ID); err != nil {
			return err
		}
	}
	scope.Members = p.Members
	if reach := (ratelimit.Reach{Limit: p.Limit, Margin: margin}); reach.Limited() {
		p.Allowed = reach.Allowed()
	}
	since := now.Add(-ratelimit.ReachWindow)
	var err error
	if p.Used, err = used(ctx, scope, since); err != nil || p.Used == 0 {
		return err
	}
	oldest, err := c.ReachOldest(ctx, p.Members, since)
	p.FreesAt = ratelimit.FreesAt(oldest)
	return err
}
