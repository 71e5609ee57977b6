package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
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
// portfolio of its own, with the reach each has used at the store's clock
// (claimsql's Portfolios). It runs in a transaction: reading a reach moves
// its running count on.
func (s *Store) Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error) {
	var out []campaign.PortfolioStatus
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		db := claimsql.New(sqlTx{tx}, postgres)
		out, err = db.Portfolios(ctx, s.now(), db.ReachCount)
		return err
	})
	return out, err
}
