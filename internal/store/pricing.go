package store

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
)

// ImportCard stores a rate card whole, in one transaction, or nothing of
// it: it is refused when its dates overlap a card of the same currency.
func (s *Store) ImportCard(ctx context.Context, c pricing.Card) (int64, error) {
	var id int64
	err := s.write(ctx, func(tx *Tx) error {
		cards, err := readCards(ctx, tx, c.Currency)
		if err != nil {
			return err
		}
		if err := pricing.Fits(cards, c); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO pricing_cards (currency, effective, until, source, imported_at) VALUES (?, ?, ?, ?, ?)`,
			c.Currency, pricing.Day(c.Effective), pricing.Day(c.Until), c.Source, s.now().UnixNano())
		if err != nil {
			return fmt.Errorf("store the card: %w", err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		for market, rates := range c.Rates {
			for cat, p := range rates {
				if _, err := tx.ExecContext(ctx, `INSERT INTO pricing_rates (card_id, market, category, price) VALUES (?, ?, ?, ?)`,
					id, market, string(cat), int64(p)); err != nil {
					return fmt.Errorf("store the card's %s %s price: %w", market, cat, err)
				}
			}
		}
		for market, cats := range c.Tiers {
			for cat, tiers := range cats {
				for _, t := range tiers {
					if _, err := tx.ExecContext(ctx, `INSERT INTO pricing_rates (card_id, market, category, tier_from, tier_to, price) VALUES (?, ?, ?, ?, ?, ?)`,
						id, market, string(cat), t.From, t.To, int64(t.Price)); err != nil {
						return fmt.Errorf("store the card's %s %s tier: %w", market, cat, err)
					}
				}
			}
		}
		return nil
	})
	return id, err
}

// readCards are the cards of currency ("": all) without their prices:
// their days are what an import is checked against.
func readCards(ctx context.Context, q querier, currency string) ([]pricing.Card, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, currency, effective, until, source FROM pricing_cards
		WHERE ? = '' OR currency = ? ORDER BY effective, currency`, currency, currency)
	if err != nil {
		return nil, fmt.Errorf("read rate cards: %w", err)
	}
	defer rows.Close()
	var cards []pricing.Card
	for rows.Next() {
		var (
			c         pricing.Card
			eff, unto string
		)
		if err := rows.Scan(&c.ID, &c.Currency, &eff, &unto, &c.Source); err != nil {
			return nil, err
		}
		c.Effective, c.Until = pricing.ParseDay(eff), pricing.ParseDay(unto)
		cards = append(cards, c)
	}
	return cards, rows.Err()
}

// spendTrigger keeps campaign_spend.committed as rows move in and out of
// the states a budget counts (in flight, accepted, or unknown: perhaps
// accepted; a CASE, not an IN list: see counts.sql). Only priced rows fire it.
const spendTrigger = `CREATE TRIGGER IF NOT EXISTS messages_spend AFTER UPDATE OF state, price ON messages
	WHEN NEW.price <> 0 OR OLD.price <> 0
	BEGIN
		UPDATE campaign_spend SET committed = committed
			+ CASE NEW.state WHEN 'sending' THEN NEW.price WHEN 'sent' THEN NEW.price WHEN 'unknown' THEN NEW.price ELSE 0 END
			- CASE OLD.state WHEN 'sending' THEN OLD.price WHEN 'sent' THEN OLD.price WHEN 'unknown' THEN OLD.price ELSE 0 END
		WHERE campaign_id = NEW.campaign_id;
	END`

// SetBudget stores a campaign's budget (max 0: none) and prices every one
// of its rows with price (the budget's count of a row), then recounts what
// is committed. A run with a budget calls it as it starts, so rows added
// or cards imported since are counted with the prices in force.
func (s *Store) SetBudget(ctx context.Context, id int64, max pricing.Micros, currency string, price func(phone string) pricing.Micros) error {
	type row struct {
		id    int64
		phone string
		price int64
	}
	var rs []row
	rows, err := s.db.QueryContext(ctx, `SELECT id, phone, price FROM messages WHERE campaign_id = ?`, id)
	if err != nil {
		return fmt.Errorf("price campaign %d: %w", id, err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.phone, &r.price); err != nil {
			rows.Close()
			return err
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return s.write(ctx, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(ctx, spendTrigger); err != nil {
			return fmt.Errorf("set campaign %d's budget: %w", id, err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE campaigns SET max_cost = ?, max_cost_currency = ? WHERE id = ?`, int64(max), currency, id)
		if err != nil {
			return fmt.Errorf("set campaign %d's budget: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
		}
		for _, r := range rs {
			if p := int64(price(r.phone)); p != r.price {
				if _, err := tx.ExecContext(ctx, `UPDATE messages SET price = ? WHERE id = ?`, p, r.id); err != nil {
					return fmt.Errorf("price campaign %d: %w", id, err)
				}
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO campaign_spend (campaign_id, committed)
			SELECT ?, coalesce(sum(price), 0) FROM messages WHERE campaign_id = ? AND state IN ('sending', 'sent', 'unknown')`, id, id)
		return err
	})
}

// Budget is the campaign's budget and, for ids, the price each row counts
// (claim's budgetTx): what is committed and the prices only under one.
func (c *claimTx) Budget(ctx context.Context, campaignID int64, ids []int64) (pricing.Budget, map[int64]pricing.Micros, error) {
	b, err := c.MaxCost(ctx, campaignID)
	if err != nil || b.Max == 0 {
		return b, nil, err
	}
	if err := c.tx.QueryRowContext(ctx, `SELECT coalesce((SELECT committed FROM campaign_spend WHERE campaign_id = ?), 0)`,
		campaignID).Scan(&b.Committed); err != nil || len(ids) == 0 {
		return b, nil, err
	}
	prices := make(map[int64]pricing.Micros, len(ids))
	rows, err := c.tx.QueryContext(ctx, `SELECT id, price FROM messages WHERE id IN (`+repeated(len(ids), "?")+`)`, anys(ids)...)
	if err != nil {
		return b, nil, fmt.Errorf("read the rows' prices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, p int64
		if err := rows.Scan(&id, &p); err != nil {
			return b, nil, err
		}
		prices[id] = pricing.Micros(p)
	}
	return b, prices, rows.Err()
}

// SetSending keeps a run's --max-held (each run's own, as its budget) and
// --ttl (0 keeps the stored one, for a resumed run) with its campaign, and
// returns the TTL in force.
func (s *Store) SetSending(ctx context.Context, id int64, maxHeld int, ttl time.Duration) (time.Duration, error) {
	var secs int64
	err := s.write(ctx, func(tx *Tx) error {
		return tx.QueryRowContext(ctx, `UPDATE campaigns SET max_held = ?, ttl = CASE WHEN ?2 > 0 THEN ?2 ELSE ttl END
			WHERE id = ?3 RETURNING ttl`, max(maxHeld, 0), int64(ttl/time.Second), id).Scan(&secs)
	})
	if err != nil {
		return 0, fmt.Errorf("keep campaign %d's sending settings: %w", id, err)
	}
	return time.Duration(secs) * time.Second, nil
}
