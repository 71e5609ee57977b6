package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/ui"
)

type costOptions struct {
	Reconcile bool
	Timeout   time.Duration
	JSON      bool
}

func newCostCmd(f *Factory) *cobra.Command {
	var o costOptions
	cmd := &cobra.Command{
		Use:   "cost ID [--reconcile]",
		Short: "Print a campaign's estimated and actual cost by market and category",
		Long: `Print what campaign ID is estimated to cost (each row that may still cost,
priced by the rate card in force on its start and its template's category)
beside what it cost (each message a status webhook said was delivered,
priced by the card in force that day; free customer service and free entry
point messages at zero), by market × category, in the card's currency, and
its --max-cost budget if it has one.

--reconcile also reads Meta's pricing_analytics for the WABA of every
account (with each account's token, from its variable) over the days the
campaign was delivered, and prints Meta's volumes and costs beside wasend's
and the difference. Meta's figures cover every message of those WABAs in
those days, other campaigns' included.`,
		Example: `  wasend cost 3
  wasend cost 3 --reconcile
  wasend cost 3 --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return costRun(cmd.Context(), f, args[0], o)
		},
	}
	cmd.Flags().BoolVar(&o.Reconcile, "reconcile", false, "compare with Meta's pricing_analytics (needs the accounts' tokens)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 20*time.Second, "per-request timeout of --reconcile")
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

func costRun(ctx context.Context, f *Factory, arg string, o costOptions) error {
	st, c, err := f.openCampaign(ctx, arg)
	if err != nil {
		return err
	}
	defer st.Close()
	cost, err := runner.Costs(ctx, st, c, f.Now())
	if err != nil {
		return err
	}
	var recon *report.Reconciliation
	if o.Reconcile {
		api, err := f.graphAPI(ctx, st, sandbox.Options{})
		if err != nil {
			return err
		}
		defer api.Close()
		r, err := runner.Reconcile(ctx, st, api, cost, c.ID, o.Timeout)
		if err != nil {
			return err
		}
		recon = &r
	}
	if o.JSON {
		out := struct {
			Campaign int64 `json:"campaign"`
			*report.CostDetail
			Reconcile *report.ReconDetail `json:"reconcile,omitempty"`
		}{c.ID, report.NewCostDetail(cost.Costing()), report.NewReconDetail(recon)}
		return f.IO.JSON(out)
	}
	if cost.NoEstimate != "" {
		fmt.Fprintf(f.IO.Out, "campaign %d: not priced: %s\n", c.ID, cost.NoEstimate)
		return nil
	}
	p := cost.Pricing
	fmt.Fprintf(f.IO.Out, "campaign %d: %s, priced by the %s card from %s (on %s)\n", c.ID, p.Category, p.Card.Currency,
		p.Card.Effective.Format(time.DateOnly), p.At.In(f.location()).Format(time.DateOnly))
	if err := printCostTable(f, cost.Costing()); err != nil {
		return err
	}
	if recon != nil {
		return printRecon(f, *recon, p.Card.Currency)
	}
	return nil
}

// printCostTable is the estimate beside the actual cost, by market ×
// category, then the totals, the budget and what could not be priced.
func printCostTable(f *Factory, cost report.Costing) error {
	t := newTable(f, "MARKET", "CATEGORY", "PRICE", "ROWS", "ESTIMATE", "DELIVERED", "FREE", "ACTUAL").Truncate("MARKET")
	for _, r := range report.CostRows(cost.Estimate, cost.Actual) {
		cells := []string{r.Market, r.Category, "", "0", "0.00", "0", "0", "0.00"}
		if e := r.Estimate; e != nil {
			cells[2], cells[3], cells[4] = e.Price.String(), strconv.FormatInt(e.Messages, 10), e.Cost.String()
		}
		if a := r.Actual; a != nil {
			cells[2] = a.Price.String()
			cells[5], cells[6], cells[7] = strconv.FormatInt(a.Messages, 10), strconv.FormatInt(a.Free, 10), a.Cost.String()
		}
		t.Row(cells...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	cur := cost.Card.Currency
	w := f.IO.Out
	fmt.Fprintf(w, "estimate: %s %s; actual: %s %s\n", cost.Estimate.Total, cur, cost.Actual.Total, cur)
	if b := cost.Budget; b.Max != 0 {
		fmt.Fprintf(w, "budget: %s %s; %s accepted or in flight\n", b.Max, b.Currency, b.Committed)
	}
	for _, u := range cost.Estimate.Unpriced {
		fmt.Fprintf(w, "not priced (estimate): %d message(s) to %s, %s: %s\n", u.Messages, u.Market, u.Category, u.Why)
	}
	for _, u := range cost.Actual.Unpriced {
		fmt.Fprintf(w, "not priced (actual): %d message(s) to %s, %s: %s\n", u.Messages, u.Market, u.Category, u.Why)
	}
	return nil
}

func printRecon(f *Factory, r report.Reconciliation, cur string) error {
	fmt.Fprintf(f.IO.Out, "\nMeta's pricing_analytics, %s to %s (WABA %v; every message of those days):\n",
		r.From.Format(time.DateOnly), r.To.Add(-time.Second).Format(time.DateOnly), r.WABAs)
	t := newTable(f, "MARKET", "CATEGORY", "DELIVERED", "META", "DIFF", "ACTUAL", "META COST", "COST DIFF").Truncate("MARKET")
	for _, l := range r.Lines {
		t.Row(l.Market, string(l.Category), strconv.FormatInt(l.Messages, 10), strconv.FormatInt(l.MetaMessages, 10),
			report.Signed(l.MessagesDiff), l.Cost.String(), l.MetaCost.String(), report.SignedAmount(l.CostDiff))
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "difference: %s %s (Meta's − wasend's)\n", report.SignedAmount(r.CostDiff()), cur)
	return nil
}

// printFileEstimate is check's and plan's estimate on a terminal: the
// total, a line per market × category, what could not be priced, and the
// tiers and free rules in force on the day.
func printFileEstimate(w io.Writer, e *report.CostDetail) {
	if e == nil {
		return
	}
	if e.NoEstimate != "" {
		fmt.Fprintf(w, "cost: not estimated: %s\n", e.NoEstimate)
		return
	}
	fmt.Fprintf(w, "cost estimate: %s %s (%s, the %s card from %s, on %s)\n", e.Estimate.Total, e.Currency, e.Category, e.Currency, e.CardFrom, e.PricedOn)
	for _, l := range e.Estimate.Lines {
		fmt.Fprintf(w, "  %8d × %-10s %s %s = %s\n", l.Messages, l.Price, l.Market, l.Category, l.Cost)
	}
	for _, u := range e.Estimate.Unpriced {
		fmt.Fprintf(w, "  %8d not priced: %s, %s: %s\n", u.Messages, u.Market, u.Category, u.Why)
	}
	if e.Tiers {
		fmt.Fprintln(w, "  volume tiers: counted from this campaign's first message (the account's earlier volume this month is not known)")
	}
	for _, r := range e.Rules {
		fmt.Fprintf(w, "  free rule: %s\n", r)
	}
}

// printEstimateRecords is plan's piped estimate: a cost record, then a
// cost_line record per market × category and an unpriced one per row
// group the card lacks.
func printEstimateRecords(f *Factory, e *report.CostDetail) error {
	if e == nil {
		return nil
	}
	w := f.IO.Out
	if e.NoEstimate != "" {
		return ui.WriteRecord(w, "cost", "estimate", "none", "reason", e.NoEstimate)
	}
	if err := ui.WriteRecord(w, "cost", "estimate", e.Estimate.Total, "currency", e.Currency, "card", strconv.FormatInt(e.Card, 10),
		"card_effective", e.CardFrom, "category", e.Category, "priced_on", e.PricedOn, "tiers", strconv.FormatBool(e.Tiers)); err != nil {
		return err
	}
	for _, l := range e.Estimate.Lines {
		if err := ui.WriteRecord(w, "cost_line", "market", l.Market, "category", string(l.Category), "messages", strconv.FormatInt(l.Messages, 10),
			"price", l.Price, "cost", l.Cost); err != nil {
			return err
		}
	}
	for _, u := range e.Estimate.Unpriced {
		if err := ui.WriteRecord(w, "unpriced", "market", u.Market, "category", string(u.Category), "messages", strconv.FormatInt(u.Messages, 10),
			"why", u.Why); err != nil {
			return err
		}
	}
	return nil
}

// costText is show's Cost line.
func costText(c *report.CampaignCost, id int64) string {
	if c.NotPriced != "" {
		return "not priced: " + oneLine(c.NotPriced)
	}
	s := fmt.Sprintf("estimate %s %s, actual %s %s", c.Estimate, c.Currency, c.Actual, c.Currency)
	if c.Budget != "" {
		s += fmt.Sprintf("; budget %s, %s accepted or in flight", c.Budget, c.Committed)
	}
	return s + fmt.Sprintf(" (wasend cost %d)", id)
}
