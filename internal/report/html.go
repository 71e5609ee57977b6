package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/htmlreport"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
)

// CostOf is a campaign's cost from where it is computed (runner.Costs):
// nil when no rate card was ever imported.
type CostOf func(ctx context.Context, c campaign.Campaign) (*Costing, error)

// HTML writes `wasend report --html`'s page of campaigns ids (one, or two
// side by side) to w, read through reads (*readmodel.Reader), each
// campaign in the true state show prints and with the cost cost gives
// (nil: none); times in loc.
func (r Reporter) HTML(ctx context.Context, w io.Writer, reads htmlreport.Reads, ids []int64, loc *time.Location, cost CostOf) error {
	rep := htmlreport.Report{Generated: r.Now, Loc: loc}
	o := htmlreport.Options{State: func(ctx context.Context, d readmodel.Detail) (string, error) {
		return r.State(ctx, d.Campaign, !d.FirstAttempt.IsZero(), d.Dropped)
	}}
	if cost != nil {
		o.Cost = func(ctx context.Context, d readmodel.Detail) (*htmlreport.Cost, error) {
			c, err := cost(ctx, d.Campaign)
			if c == nil || err != nil {
				return nil, err
			}
			return htmlCost(*c), nil
		}
	}
	for _, id := range ids {
		c, err := htmlreport.Load(ctx, reads, id, o)
		if err != nil {
			return err
		}
		rep.Campaigns = append(rep.Campaigns, c)
	}
	return htmlreport.Render(w, rep)
}

// htmlCost is c with show's totals (NewCampaignCost) and cost's lines
// (CostRows), so the page says what those say.
func htmlCost(c Costing) *htmlreport.Cost {
	b := NewCampaignCost(c)
	out := &htmlreport.Cost{Currency: b.Currency, Estimate: b.Estimate, Actual: b.Actual, Budget: b.Budget,
		Committed: b.Committed, NotPriced: b.NotPriced}
	if c.NoEstimate != "" {
		return out
	}
	for _, r := range CostRows(c.Estimate, c.Actual) {
		l := htmlreport.CostLine{Market: r.Market, Category: r.Category, Estimate: "0.00", Actual: "0.00"}
		if e := r.Estimate; e != nil {
			l.Price, l.Rows, l.Estimate = e.Price.String(), e.Messages, e.Cost.String()
		}
		if a := r.Actual; a != nil {
			l.Price, l.Delivered, l.Free, l.Actual = a.Price.String(), a.Messages, a.Free, a.Cost.String()
		}
		out.Lines = append(out.Lines, l)
	}
	for _, side := range []struct {
		name string
		cost pricing.Cost
	}{{"estimate", c.Estimate}, {"actual", c.Actual}} {
		for _, u := range side.cost.Unpriced {
			out.Unpriced = append(out.Unpriced, fmt.Sprintf("%s: %d message(s) to %s, %s: %s", side.name, u.Messages, u.Market, u.Category, u.Why))
		}
	}
	return out
}
