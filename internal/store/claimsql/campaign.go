package claimsql

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store/dialect"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// campaignRow is what a claim reads of its campaign's row: read once, in
// one statement, and again after the claim writes to it (Wrote). On SQLite
// that is one statement a claim where there were six (each a round trip
// through database/sql and cgo, in every transaction whatever its rows).
// Postgres reads it FOR SHARE: an operator's pause or cancel (which lock
// it to move it) comes before the claim or after it, as under SQLite's
// single writer.
type campaignRow struct {
	id                        int64
	state                     string
	cancelled                 bool
	startAt, beganAt, expires *int64
	expire                    int64
	wf, wt, wd                *int64
	serviceWindow             int64
	prio, weight, borrow      int64
	served                    float64
	idleUntil, pairGap        int64
	kind, template, text      string
	maxCost                   int64 // --max-cost, 0: none
	costCurrency              string
	maxHeld, held             int64 // --max-held (0: none), and its held sends when there is one
}

// campaign is campaign id's row (campaign.ErrNotFound when there is none).
func (c Common) campaign(ctx context.Context, id int64) (*campaignRow, error) {
	if r := c.camp.row; r != nil && r.id == id {
		return r, nil
	}
	query := `SELECT state, cancelled_at IS NOT NULL, start_at, began_at, expire_after, expires_at,
		window_from, window_to, window_days, service_window, priority, weight, borrow, served, idle_until, pair_gap,
		kind, template, text, max_cost, max_cost_currency, max_held,
		CASE WHEN max_held > 0 THEN CAST(coalesce((SELECT sum(held) FROM delivery_counts WHERE campaign_id = ?1), 0) AS BIGINT) ELSE 0 END
		FROM campaigns WHERE id = ?1`
	if c.d == dialect.Postgres {
		query += ` FOR SHARE`
	}
	r := &campaignRow{id: id}
	found, err := c.row(ctx, query, []any{id}, &r.state, &r.cancelled, &r.startAt, &r.beganAt, &r.expire,
		&r.expires, &r.wf, &r.wt, &r.wd, &r.serviceWindow, &r.prio, &r.weight, &r.borrow, &r.served, &r.idleUntil, &r.pairGap,
		&r.kind, &r.template, &r.text, &r.maxCost, &r.costCurrency, &r.maxHeld, &r.held)
	switch {
	case err != nil:
		return nil, fmt.Errorf("read campaign %d: %w", id, err)
	case !found:
		return nil, fmt.Errorf("campaign %d: %w", id, campaign.ErrNotFound)
	}
	c.camp.row = r
	return r, nil
}

// Wrote says the claim changed its campaign's row: the next look reads it
// again. Common's own writes to it say so; a driver's say so too.
func (c Common) Wrote() { c.camp.row = nil }

func (c Common) Stopped(ctx context.Context, id int64) error {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return err
	}
	if r.cancelled {
		return campaign.CampaignCancelled.Stopped()
	}
	return campaign.CampaignState(r.state).Stopped()
}

func (c Common) Schedule(ctx context.Context, id int64) (driver.ClaimSchedule, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return driver.ClaimSchedule{}, err
	}
	sc := driver.ClaimSchedule{StartAt: fromNullNanos(r.startAt), BeganAt: fromNullNanos(r.beganAt), ExpiresAt: fromNullNanos(r.expires),
		ExpireAfter: time.Duration(r.expire)}
	if r.wf != nil && r.wt != nil && r.wd != nil {
		sc.Window = &campaign.Window{From: int(*r.wf), To: int(*r.wt), Days: uint8(*r.wd)}
	}
	return sc, nil
}

// Turn is the campaign's share, what it was served and whether it was idle,
// and its competitors.
func (c Common) Turn(ctx context.Context, id int64, now, live time.Time) (driver.ClaimTurn, error) {
	var t driver.ClaimTurn
	r, err := c.campaign(ctx, id)
	if err != nil {
		return t, err
	}
	t.Share.Priority, t.Share.Weight, t.Share.Borrow = campaign.Priority(r.prio), int(r.weight), time.Duration(r.borrow)
	t.Served, t.Idle = r.served, r.idleUntil != 0
	t.Others, err = c.Competitors(ctx, id, now, live)
	return t, err
}

func (c Common) PairGap(ctx context.Context, id int64) (time.Duration, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return 0, err
	}
	return time.Duration(r.pairGap), nil
}

func (c Common) RepeatGuard(ctx context.Context, id int64) (string, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return "", err
	}
	return campaign.RepeatGuard(campaign.MessageKind(r.kind), r.template, r.text), nil
}

func (c Common) ServiceWindow(ctx context.Context, id int64) (bool, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return false, err
	}
	return r.serviceWindow != 0, nil
}

// MaxCost is the campaign's --max-cost (Max 0: none), without what is
// committed against it: a driver reads that only when there is one.
func (c Common) MaxCost(ctx context.Context, id int64) (pricing.Budget, error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return pricing.Budget{}, err
	}
	return pricing.Budget{Max: pricing.Micros(r.maxCost), Currency: r.costCurrency}, nil
}

// Held is the campaign's held sends (a kept count, read only under a
// --max-held) and --max-held, for the claim (claim.heldTx): the claim moves
// no row that is held, so the count read with the row holds for it.
func (c Common) Held(ctx context.Context, id int64) (held, max int, err error) {
	r, err := c.campaign(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	return int(r.held), int(r.maxHeld), nil
}

func fromNullNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return rowscan.FromNanos(*n)
}
