package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/pricing"
)

// ImportCard keeps a rate card and its prices in one transaction, refused
// (pricing.Fits) when its days overlap a card of its currency. The table
// is locked against other importers first: two hosts importing at once
// must not both pass the overlap check (SQLite's single writer gives that).
func (s *Store) ImportCard(ctx context.Context, c pricing.Card) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE pricing_cards IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("store the card: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT id, currency, effective, until, source FROM pricing_cards
			WHERE currency = $1 ORDER BY effective`, c.Currency)
		if err != nil {
			return fmt.Errorf("read rate cards: %w", err)
		}
		cards, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (k pricing.Card, err error) {
			var eff, until string
			err = r.Scan(&k.ID, &k.Currency, &eff, &until, &k.Source)
			k.Effective, k.Until = pricing.ParseDay(eff), pricing.ParseDay(until)
			return k, err
		})
		if err != nil {
			return fmt.Errorf("read rate cards: %w", err)
		}
		if err := pricing.Fits(cards, c); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO pricing_cards (currency, effective, until, source, imported_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			c.Currency, pricing.Day(c.Effective), pricing.Day(c.Until), c.Source, s.now().UnixNano()).Scan(&id); err != nil {
			return fmt.Errorf("store the card: %w", err)
		}
		b := &pgx.Batch{}
		for market, rates := range c.Rates {
			for cat, p := range rates {
				b.Queue(`INSERT INTO pricing_rates (card_id, market, category, price) VALUES ($1, $2, $3, $4)`,
					id, market, string(cat), int64(p))
			}
		}
		for market, cats := range c.Tiers {
			for cat, tiers := range cats {
				for _, t := range tiers {
					b.Queue(`INSERT INTO pricing_rates (card_id, market, category, tier_from, tier_to, price) VALUES ($1, $2, $3, $4, $5, $6)`,
						id, market, string(cat), t.From, t.To, int64(t.Price))
				}
			}
		}
		if err := send(ctx, tx, b); err != nil {
			return fmt.Errorf("store the card's prices: %w", err)
		}
		return nil
	})
	return id, err
}

// RecordMarketingStatus keeps a WABA's Marketing Messages API onboarding
// status as a sync read it.
func (s *Store) RecordMarketingStatus(ctx context.Context, waba, status string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO waba_marketing (waba_id, status, synced_at) VALUES ($1, $2, $3)
		ON CONFLICT (waba_id) DO UPDATE SET status = excluded.status, synced_at = excluded.synced_at`,
		waba, status, at.UnixNano()); err != nil {
		return fmt.Errorf("record the Marketing Messages API status of WABA %s: %w", waba, err)
	}
	return nil
}
