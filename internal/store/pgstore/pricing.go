package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/wasend/wasend/internal/campaign"
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

// SetBudget keeps a campaign's budget (max 0: none), prices every one of
// its rows with price and recounts what is committed, as SQLite's store
// does. The rows are read and priced before the transaction; it takes the
// claim lock (no claim decides on a half-priced campaign), then the
// campaign's spend row before the recount: an outcome, a webhook or a
// rescue that moves a priced row (they do not take the claim lock) either
// committed before the recount, which reads it, or its trigger adds the
// change to the recounted figure after.
func (s *Store) SetBudget(ctx context.Context, id int64, max pricing.Micros, currency string, price func(phone string) pricing.Micros) error {
	rows, err := s.pool.Query(ctx, `SELECT id, phone, price FROM messages WHERE campaign_id = $1`, id)
	if err != nil {
		return fmt.Errorf("price campaign %d: %w", id, err)
	}
	var ids, prices []int64 // the rows whose price changes
	var rid, was int64
	var phone string
	_, err = pgx.ForEachRow(rows, []any{&rid, &phone, &was}, func() error {
		if p := int64(price(phone)); p != was {
			ids, prices = append(ids, rid), append(prices, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("price campaign %d: %w", id, err)
	}
	err = s.sendTx(ctx, func(tx pgx.Tx, b *pgx.Batch) error {
		b.Queue(`UPDATE campaigns SET max_cost = $1, max_cost_currency = $2 WHERE id = $3`, int64(max), currency, id).Exec(
			func(tag pgconn.CommandTag) error {
				if tag.RowsAffected() == 0 {
					return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
				}
				return nil
			})
		if len(ids) > 0 {
			b.Queue(`UPDATE messages m SET price = v.price FROM unnest($1::bigint[], $2::bigint[]) AS v(id, price)
				WHERE m.id = v.id`, ids, prices)
		}
		b.Queue(`INSERT INTO campaign_spend (campaign_id) VALUES ($1) ON CONFLICT DO NOTHING`, id)
		b.Queue(`SELECT FROM campaign_spend WHERE campaign_id = $1 FOR UPDATE`, id)
		// The recount is a statement of its own, after the row is locked:
		// its snapshot holds every move that wrote the row before.
		b.Queue(`UPDATE campaign_spend SET committed = (SELECT coalesce(sum(price), 0) FROM messages
			WHERE campaign_id = $1 AND state IN ('sending', 'sent', 'unknown')) WHERE campaign_id = $1`, id)
		return send(ctx, tx, b)
	})
	if err != nil {
		return fmt.Errorf("set campaign %d's budget: %w", id, err)
	}
	return nil
}

// Budget is the claim's read of a campaign's budget (claim's budgetTx):
// --max-cost is on the campaign's row the claim has read; only under a
// budget are what is committed and the prices of ids read, in one
// statement.
func (c *claimTx) Budget(ctx context.Context, campaignID int64, ids []int64) (pricing.Budget, map[int64]pricing.Micros, error) {
	b, err := c.MaxCost(ctx, campaignID)
	if err != nil || b.Max == 0 {
		return b, nil, err
	}
	var committed int64
	var got, ps []int64
	if err := c.QueryRow(ctx, `SELECT coalesce((SELECT committed FROM campaign_spend WHERE campaign_id = $1), 0),
		coalesce(array_agg(id ORDER BY id), '{}'), coalesce(array_agg(price ORDER BY id), '{}')
		FROM messages WHERE id = ANY($2)`, campaignID, ids).Scan(&committed, &got, &ps); err != nil {
		return b, nil, fmt.Errorf("read campaign %d's budget: %w", campaignID, err)
	}
	b.Committed = pricing.Micros(committed)
	prices := make(map[int64]pricing.Micros, len(got))
	for i, id := range got {
		prices[id] = pricing.Micros(ps[i])
	}
	return b, prices, nil
}
