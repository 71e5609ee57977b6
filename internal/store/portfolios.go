package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
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
// portfolio of its own, with the reach each has used at the store's clock
// (claimsql's Portfolios), read as a reader reads it (readReach).
func (s *Store) Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error) {
	return claimsql.New(sqlTx{s.db}, sqlite).Portfolios(ctx, s.now(), s.readReach)
}
