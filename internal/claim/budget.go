package claim

import (
	"context"
	"fmt"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/store/driver"
)

// budget holds a claim to the campaign's --max-cost: a row is admitted
// only while what was accepted, what is in flight (both counted by the
// store as rows move) and what this claim took, plus the row's own price,
// stay within it. Claims are serialised by the store's write lock, so
// every runner's rows in flight are in the count: several workers or
// processes cannot pass the budget between them.
type budget struct {
	b      pricing.Budget
	prices map[int64]pricing.Micros
	taken  pricing.Micros
	hit    bool // a row was refused for the budget
}

// budgetTx is what the claim reads for a campaign's budget, in its
// transaction: both drivers' ClaimTx implement it.
type budgetTx interface {
	// Budget is the campaign's budget and, for ids, the price each row
	// counts; what is committed is read when there is a budget.
	Budget(ctx context.Context, campaignID int64, ids []int64) (pricing.Budget, map[int64]pricing.Micros, error)
}

// readBudget reads the campaign's budget and the prices of msgs; a
// campaign without one gives a budget that admits everything.
func readBudget(ctx context.Context, tx driver.ClaimTx, campaignID int64, msgs []campaign.Message, prev *budget) (*budget, error) {
	bt, ok := tx.(budgetTx)
	if !ok {
		return nil, fmt.Errorf("claim: the store's %T reads no budget (Budget)", tx)
	}
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	b, prices, err := bt.Budget(ctx, campaignID, ids)
	if err != nil {
		return nil, err
	}
	out := &budget{b: b, prices: prices}
	if prev != nil {
		out.taken, out.hit = prev.taken, prev.hit
	}
	return out, nil
}

// fits says whether m may be admitted; when not, the claim stops there.
func (g *budget) fits(m campaign.Message) bool {
	if g.b.Max == 0 {
		return true
	}
	if g.b.Committed+g.taken+g.prices[m.ID] > g.b.Max {
		g.hit = true
		return false
	}
	return true
}

// take counts an admitted row.
func (g *budget) take(m campaign.Message) { g.taken += g.prices[m.ID] }

// refused is the claim's error when the budget admitted nothing.
func (g *budget) refused(m campaign.Message) error {
	return fmt.Errorf("%w: %s %s accepted or in flight, and the next message would cost %s more than the %s %s of --max-cost",
		campaign.ErrBudget, g.b.Committed, g.b.Currency, g.b.Committed+g.prices[m.ID]-g.b.Max, g.b.Max, g.b.Currency)
}
