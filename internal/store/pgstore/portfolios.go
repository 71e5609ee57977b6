package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	now := s.now()
	err := s.pool.QueryRow(ctx, `INSERT INTO portfolios (name, pinned_limit, margin, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		p.Name, nullID(int64(p.PinnedLimit)), p.Margin, now.UnixNano()).Scan(&p.ID)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
			return p, fmt.Errorf("portfolio %q: %w", p.Name, driver.ErrExists)
		}
		return p, fmt.Errorf("insert portfolio %s: %w", p.Name, err)
	}
	p.CreatedAt = now
	return p, nil
}

// UpdatePortfolio applies a change to the named portfolio; running
// campaigns read it at their next claim. Its row is locked for the change.
func (s *Store) UpdatePortfolio(ctx context.Context, name string, ch driver.PortfolioChange) (campaign.Portfolio, error) {
	var p campaign.Portfolio
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if p, err = portfolioByName(ctx, tx, name, true); err != nil {
			return err
		}
		if err := ch.Apply(&p); err != nil {
			return err
		}
		if err := releaseHeld(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE portfolios SET pinned_limit = $1, margin = $2 WHERE id = $3`,
			nullID(int64(p.PinnedLimit)), p.Margin, p.ID); err != nil {
			return fmt.Errorf("update portfolio %s: %w", name, err)
		}
		return nil
	})
	return p, err
}

// portfolioByName is the named portfolio (campaign.ErrNotFound saying how
// to add it), locked for update when lock is set.
func portfolioByName(ctx context.Context, q querier, name string, lock bool) (campaign.Portfolio, error) {
	p := campaign.Portfolio{Name: name}
	var (
		pinned  *int64
		created int64
	)
	query := `SELECT id, pinned_limit, margin, created_at FROM portfolios WHERE name = $1`
	if lock {
		query += ` FOR UPDATE`
	}
	err := q.QueryRow(ctx, query, name).Scan(&p.ID, &pinned, &p.Margin, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("portfolio %q: %w (add it with `wasend portfolio add %s`)", name, campaign.ErrNotFound, name)
	}
	if err != nil {
		return p, fmt.Errorf("read portfolio %s: %w", name, err)
	}
	if pinned != nil {
		p.PinnedLimit = int(*pinned)
	}
	p.CreatedAt = fromNanos(created)
	return p, nil
}

// Portfolios returns every portfolio, then every account without one as a
// portfolio of its own, with the reach each has used at the store's clock.
// It runs in a transaction: reading a reach moves its running count on.
func (s *Store) Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error) {
	var out []campaign.PortfolioStatus
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		rows, err := tx.Query(ctx, `SELECT id, name, pinned_limit, margin, created_at FROM portfolios ORDER BY name COLLATE "C"`)
		if err != nil {
			return fmt.Errorf("list portfolios: %w", err)
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (campaign.PortfolioStatus, error) {
			var (
				p       campaign.PortfolioStatus
				pinned  *int64
				created int64
			)
			err := row.Scan(&p.ID, &p.Name, &pinned, &p.Margin, &created)
			if pinned != nil {
				p.PinnedLimit = int(*pinned)
			}
			p.CreatedAt = fromNanos(created)
			return p, err
		})
		if err != nil {
			return fmt.Errorf("list portfolios: %w", err)
		}
		accts, err := loadAccounts(ctx, tx, `ORDER BY a.id`)
		if err != nil {
			return err
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
			if err := portfolioReach(ctx, tx, &out[i], accts, now); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// portfolioReach fills in a listed portfolio's limit, members and the reach
// they used in the window before now. The limit is the first live
// account's (each account of a portfolio reads the same); a portfolio
// without live accounts has its pin, and its removed accounts may still
// have sent within the window.
func portfolioReach(ctx context.Context, tx pgx.Tx, p *campaign.PortfolioStatus, accts []account, now time.Time) error {
	p.Limit, p.At = p.PinnedLimit, now
	margin, portfolio := p.Margin, p.ID
	for _, a := range accts {
		if (p.Own && a.Name == p.Name) || (!p.Own && a.PortfolioID == p.ID) {
			read, from, at, err := readLimit(ctx, tx, a)
			if err != nil {
				return err
			}
			p.Limit, margin = campaign.EffectiveLimit(a.PinnedLimit, read), a.Margin
			p.ReadLimit, p.ReadFrom, p.ReadAt = read, from, fromNanos(at)
			portfolio = a.PortfolioID
			if p.Own {
				p.Members = []int64{a.ID}
			}
			break
		}
	}
	scope := driver.ReachScope{Portfolio: portfolio}
	if portfolio == 0 {
		scope.Account = p.Members[0]
	} else {
		rows, err := tx.Query(ctx, `SELECT id FROM accounts WHERE portfolio_id = $1`, portfolio)
		if err != nil {
			return fmt.Errorf("read portfolio members: %w", err)
		}
		if p.Members, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return fmt.Errorf("read portfolio members: %w", err)
		}
	}
	scope.Members = p.Members
	reach := ratelimit.Reach{Limit: p.Limit, Margin: margin}
	if reach.Limited() {
		p.Allowed = reach.Allowed()
	}
	since := now.Add(-ratelimit.ReachWindow)
	var err error
	db := claimsql.New(sqlTx{tx}, claimsql.Postgres)
	if p.Used, err = db.ReachCount(ctx, scope, since); err != nil || p.Used == 0 {
		return err
	}
	oldest, err := db.ReachOldest(ctx, p.Members, since)
	p.FreesAt = ratelimit.FreesAt(oldest)
	return err
}

// readLimit is the messaging limit last read for an account's portfolio:
// its own for an account without one, else the latest any of its numbers
// read; from names the account it was read through.
func readLimit(ctx context.Context, q querier, a account) (limit int, from string, at int64, err error) {
	if a.PortfolioID == 0 {
		return a.Synced.MessagingLimit, a.Name, nanos(a.Synced.At), nil
	}
	err = q.QueryRow(ctx, `SELECT messaging_limit_read, name, synced_at FROM accounts
		WHERE portfolio_id = $1 AND messaging_limit_read IS NOT NULL AND synced_at IS NOT NULL
		ORDER BY synced_at DESC LIMIT 1`, a.PortfolioID).Scan(&limit, &from, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", 0, nil
	}
	if err != nil {
		return 0, "", 0, fmt.Errorf("read the messaging limit of portfolio %s: %w", a.Portfolio, err)
	}
	return limit, from, at, nil
}
