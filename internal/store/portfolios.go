package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/claimsql"
	"github.com/wasend/wasend/internal/store/driver"
)

// AddPortfolio stores a new portfolio.
func (s *Store) AddPortfolio(ctx context.Context, p campaign.Portfolio) (campaign.Portfolio, error) {
	if err := p.Validate(); err != nil {
		return p, err
	}
	err := s.write(ctx, func(tx *Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO portfolios (name, pinned_limit, margin, created_at) VALUES (?, ?, ?, ?)`,
			p.Name, nullInt(p.PinnedLimit), p.Margin, now.UnixNano())
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("portfolio %q: %w", p.Name, driver.ErrExists)
			}
			return fmt.Errorf("insert portfolio %s: %w", p.Name, err)
		}
		p.ID, _ = res.LastInsertId()
		p.CreatedAt = now
		return nil
	})
	return p, err
}

// UpdatePortfolio applies a change to the named portfolio. Running
// campaigns read it at their next claim.
func (s *Store) UpdatePortfolio(ctx context.Context, name string, ch driver.PortfolioChange) (campaign.Portfolio, error) {
	var p campaign.Portfolio
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		if p, err = portfolioByName(ctx, tx, name); err != nil {
			return err
		}
		if err := ch.Apply(&p); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE portfolios SET pinned_limit = ?, margin = ? WHERE id = ?`,
			nullInt(p.PinnedLimit), p.Margin, p.ID); err != nil {
			return fmt.Errorf("update portfolio %s: %w", name, err)
		}
		return nil
	})
	return p, err
}

func portfolioByName(ctx context.Context, q querier, name string) (campaign.Portfolio, error) {
	var (
		p       = campaign.Portfolio{Name: name}
		pinned  sql.NullInt64
		created int64
	)
	err := q.QueryRowContext(ctx, `SELECT id, pinned_limit, margin, created_at FROM portfolios WHERE name = ?`, name).
		Scan(&p.ID, &pinned, &p.Margin, &created)
	if err == sql.ErrNoRows {
		return p, fmt.Errorf("portfolio %q: %w (add it with `wasend portfolio add %s`)", name, campaign.ErrNotFound, name)
	}
	if err != nil {
		return p, fmt.Errorf("read portfolio %s: %w", name, err)
	}
	p.PinnedLimit = int(pinned.Int64)
	p.CreatedAt = fromNanos(created)
	return p, nil
}

// portfolioID resolves a portfolio name for an account: "" is none.
func portfolioID(ctx context.Context, q querier, name string) (sql.NullInt64, error) {
	if name == "" {
		return sql.NullInt64{}, nil
	}
	p, err := portfolioByName(ctx, q, name)
	if err != nil {
		return sql.NullInt64{}, err
	}
	return sql.NullInt64{Int64: p.ID, Valid: true}, nil
}

func nullInt(v int) sql.NullInt64 { return sql.NullInt64{Int64: int64(v), Valid: v != 0} }

// Portfolios returns every portfolio, then every account without one as a
// portfolio of its own, with the reach each has used at the store's clock.
func (s *Store) Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error) {
	now := s.now()
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, pinned_limit, margin, created_at FROM portfolios ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list portfolios: %w", err)
	}
	var out []campaign.PortfolioStatus
	for rows.Next() {
		var (
			p       campaign.PortfolioStatus
			pinned  sql.NullInt64
			created int64
		)
		if err := rows.Scan(&p.ID, &p.Name, &pinned, &p.Margin, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read portfolio: %w", err)
		}
		p.PinnedLimit, p.CreatedAt = int(pinned.Int64), fromNanos(created)
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list portfolios: %w", err)
	}
	accts, err := loadAccounts(ctx, s.db, `ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	byID := map[int64]int{}
	for i := range out {
		byID[out[i].ID] = i
	}
	for _, a := range accts {
		if a.portfolioID == 0 {
			out = append(out, campaign.PortfolioStatus{Own: true, Accounts: []string{a.Name},
				Portfolio: campaign.Portfolio{Name: a.Name, Margin: driver.DefaultMargin}})
			continue
		}
		p := &out[byID[a.portfolioID]]
		p.Accounts = append(p.Accounts, a.Name)
	}
	for i := range out {
		p := &out[i]
		g, err := reachOf(ctx, s.db, p, accts)
		if err != nil {
			return nil, err
		}
		p.Limit, p.Allowed, p.At, p.Members = g.limit, g.reach.Allowed(), now, g.members
		p.ReadLimit, p.ReadFrom, p.ReadAt = g.read, g.readFrom, g.readAt
		if !g.reach.Limited() {
			p.Allowed = 0
		}
		since := now.Add(-ratelimit.ReachWindow)
		scope := driver.ReachScope{Portfolio: p.ID, Members: g.members}
		if p.Own {
			scope = driver.ReachScope{Account: g.members[0], Members: g.members}
		}
		if p.Used, err = s.readReach(ctx, scope, since); err != nil {
			return nil, err
		}
		if p.Used > 0 {
			oldest, err := claimsql.New(sqlTx{s.db}, claimsql.SQLite).ReachOldest(ctx, g.members, since)
			if err != nil {
				return nil, err
			}
			p.FreesAt = ratelimit.FreesAt(oldest)
		}
	}
	return out, nil
}

// portfolioReach is a listed portfolio's messaging limit and who counts
// towards it (every account of it, removed and disabled ones too).
type portfolioReach struct {
	limit int // that applies: 0 none
	reach ratelimit.Reach
	// The limit last read from the Graph API (0: never), through which
	// account, when.
	read     int
	readFrom string
	readAt   time.Time
	members  []int64
}

// reachOf is the reach of a listed portfolio.
func reachOf(ctx context.Context, q querier, p *campaign.PortfolioStatus, accts []account) (portfolioReach, error) {
	for _, a := range accts {
		if (p.Own && a.Name == p.Name) || (!p.Own && a.portfolioID == p.ID) {
			read, from, at, err := readLimit(ctx, q, a)
			if err != nil {
				return portfolioReach{}, err
			}
			limit := campaign.EffectiveLimit(a.pinnedLimit, read)
			g := portfolioReach{limit: limit, reach: ratelimit.Reach{Limit: limit, Margin: a.margin},
				read: read, readFrom: from, readAt: fromNanos(at), members: []int64{a.ID}}
			if a.portfolioID != 0 {
				g.members, err = portfolioMembers(ctx, q, a.portfolioID)
			}
			return g, err
		}
	}
	// A portfolio without live accounts: its removed ones may still have
	// sent within the window.
	g := portfolioReach{limit: p.PinnedLimit, reach: ratelimit.Reach{Limit: p.PinnedLimit, Margin: p.Margin}}
	var err error
	g.members, err = portfolioMembers(ctx, q, p.ID)
	return g, err
}

// portfolioMembers are the ids of every account of a portfolio.
func portfolioMembers(ctx context.Context, q querier, portfolioID int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT id FROM accounts WHERE portfolio_id = ?`, portfolioID)
	if err != nil {
		return nil, fmt.Errorf("read portfolio members: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read portfolio members: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
