package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
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
	var recon *runner.Reconciliation
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
			*campaignCostJSON
			Reconcile *reconJSON `json:"reconcile,omitempty"`
		}{c.ID, newCampaignCostJSON(cost), newReconJSON(recon)}
		return f.IO.JSON(out)
	}
	if cost.NoEstimate != "" {
		fmt.Fprintf(f.IO.Out, "campaign %d: not priced: %s\n", c.ID, cost.NoEstimate)
		return nil
	}
	p := cost.Pricing
	fmt.Fprintf(f.IO.Out, "campaign %d: %s, priced by the %s card from %s (on %s)\n", c.ID, p.Category, p.Card.Currency,
		p.Card.Effective.Format(time.DateOnly), p.At.In(f.location()).Format(time.DateOnly))
	if err := printCostTable(f, cost); err != nil {
		return err
	}
	if recon != nil {
		return printRecon(f, *recon, p.Card.Currency)
	}
	return nil
}

// printCostTable is the estimate beside the actual cost, by market ×
// category, then the totals, the budget and what could not be priced.
func printCostTable(f *Factory, cost runner.CampaignCost) error {
	type row struct{ est, act *pricing.Line }
	rows := map[pricing.Key]*row{}
	var keys []pricing.Key
	at := func(k pricing.Key) *row {
		if rows[k] == nil {
			rows[k] = &row{}
			keys = append(keys, k)
		}
		return rows[k]
	}
	for i, l := range cost.Estimate.Lines {
		at(pricing.Key{Market: l.Market, Category: l.Category}).est = &cost.Estimate.Lines[i]
	}
	for i, l := range cost.Actual.Lines {
		at(pricing.Key{Market: l.Market, Category: l.Category}).act = &cost.Actual.Lines[i]
	}
	t := newTable(f, "MARKET", "CATEGORY", "PRICE", "ROWS", "ESTIMATE", "DELIVERED", "FREE", "ACTUAL").Truncate("MARKET")
	for _, k := range keys {
		r := rows[k]
		cells := []string{k.Market, string(k.Category), "", "0", "0.00", "0", "0", "0.00"}
		if r.est != nil {
			cells[2], cells[3], cells[4] = r.est.Price.String(), strconv.FormatInt(r.est.Messages, 10), r.est.Cost.String()
		}
		if r.act != nil {
			cells[2] = r.act.Price.String()
			cells[5], cells[6], cells[7] = strconv.FormatInt(r.act.Messages, 10), strconv.FormatInt(r.act.Free, 10), r.act.Cost.String()
		}
		t.Row(cells...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	cur := cost.Pricing.Card.Currency
	w := f.IO.Out
	fmt.Fprintf(w, "estimate: %s %s; actual: %s %s\n", cost.Estimate.Total, cur, cost.Actual.Total, cur)
	if b := cost.Budget; b.Max != 0 {
		fmt.Fprintf(w, "budget: %s %s; %s accepted or in flight\n", b.Max, b.Currency, b.Committed)
	}
	printUnpriced(w, "estimate", cost.Estimate.Unpriced)
	printUnpriced(w, "actual", cost.Actual.Unpriced)
	return nil
}

func printUnpriced(w io.Writer, what string, us []pricing.Unpriced) {
	for _, u := range us {
		fmt.Fprintf(w, "not priced (%s): %d message(s) to %s, %s: %s\n", what, u.Messages, u.Market, u.Category, u.Why)
	}
}

func printRecon(f *Factory, r runner.Reconciliation, cur string) error {
	fmt.Fprintf(f.IO.Out, "\nMeta's pricing_analytics, %s to %s (WABA %v; every message of those days):\n",
		r.From.Format(time.DateOnly), r.To.Add(-time.Second).Format(time.DateOnly), r.WABAs)
	t := newTable(f, "MARKET", "CATEGORY", "DELIVERED", "META", "DIFF", "ACTUAL", "META COST", "COST DIFF").Truncate("MARKET")
	var diff pricing.Micros
	for _, l := range r.Lines {
		t.Row(l.Market, string(l.Category), strconv.FormatInt(l.Messages, 10), strconv.FormatInt(l.MetaMessages, 10),
			signed(l.MessagesDiff), l.Cost.String(), l.MetaCost.String(), signedMicros(l.CostDiff))
		diff += l.CostDiff
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Out, "difference: %s %s (Meta's − wasend's)\n", signedMicros(diff), cur)
	return nil
}

func signed(n int64) string {
	if n > 0 {
		return "+" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

func signedMicros(m pricing.Micros) string {
	if m > 0 {
		return "+" + m.String()
	}
	return m.String()
}

// campaignCostJSON is a campaign's estimate and actual cost in --json:
// amounts are decimal strings in the card's currency, exact.
type campaignCostJSON struct {
	NoEstimate string      `json:"not_priced,omitempty"`
	Currency   string      `json:"currency,omitempty"`
	Card       int64       `json:"card,omitempty"`
	CardFrom   string      `json:"card_effective,omitempty"`
	Category   string      `json:"category,omitempty"`
	PricedOn   string      `json:"priced_on,omitempty"`
	Estimate   *costJSON   `json:"estimate,omitempty"`
	Actual     *costJSON   `json:"actual,omitempty"`
	Budget     *budgetJSON `json:"budget,omitempty"`
	Tiers      bool        `json:"tiers,omitempty"`      // the card has volume tiers
	Rules      []string    `json:"free_rules,omitempty"` // the free rules in force on the day
}

type costJSON struct {
	Total    string             `json:"total"`
	Lines    []costLineJSON     `json:"lines"`
	Unpriced []pricing.Unpriced `json:"unpriced"`
}

type costLineJSON struct {
	pricing.Line
	Price string `json:"price"`
	Cost  string `json:"cost"`
}

type budgetJSON struct {
	Max       string `json:"max"`
	Currency  string `json:"currency"`
	Committed string `json:"accepted_or_in_flight"`
}

func newCostJSON(c pricing.Cost) *costJSON {
	out := &costJSON{Total: c.Total.String(), Lines: []costLineJSON{}, Unpriced: c.Unpriced}
	if out.Unpriced == nil {
		out.Unpriced = []pricing.Unpriced{}
	}
	for _, l := range c.Lines {
		out.Lines = append(out.Lines, costLineJSON{Line: l, Price: l.Price.String(), Cost: l.Cost.String()})
	}
	return out
}

func newCampaignCostJSON(c runner.CampaignCost) *campaignCostJSON {
	out := &campaignCostJSON{NoEstimate: c.NoEstimate}
	if b := c.Budget; b.Max != 0 {
		out.Budget = &budgetJSON{Max: b.Max.String(), Currency: b.Currency, Committed: b.Committed.String()}
	}
	if c.NoEstimate != "" {
		return out
	}
	p := c.Pricing
	out.Currency, out.Card, out.CardFrom = p.Card.Currency, p.Card.ID, p.Card.Effective.Format(time.DateOnly)
	out.Category, out.PricedOn = string(p.Category), p.At.UTC().Format(time.DateOnly)
	out.Estimate, out.Actual = newCostJSON(c.Estimate), newCostJSON(c.Actual)
	out.Tiers, out.Rules = len(p.Card.Tiers) > 0, pricing.Rules(p.At)
	return out
}

type reconJSON struct {
	From  string          `json:"from"`
	To    string          `json:"to"`
	WABAs []string        `json:"wabas"`
	Lines []reconLineJSON `json:"lines"`
	Diff  string          `json:"cost_difference"`
}

type reconLineJSON struct {
	runner.ReconLine
	Messages     int64  `json:"delivered"`
	Free         int64  `json:"free"`
	Cost         string `json:"cost"`
	MetaMessages int64  `json:"meta_volume"`
	MetaFree     int64  `json:"meta_free"`
	MetaCost     string `json:"meta_cost"`
	CostDiff     string `json:"cost_difference"`
}

func newReconJSON(r *runner.Reconciliation) *reconJSON {
	if r == nil {
		return nil
	}
	out := &reconJSON{From: r.From.Format(time.DateOnly), To: r.To.Format(time.DateOnly), WABAs: r.WABAs, Lines: []reconLineJSON{}}
	var diff pricing.Micros
	for _, l := range r.Lines {
		out.Lines = append(out.Lines, reconLineJSON{ReconLine: l, Messages: l.Messages, Free: l.Free, Cost: l.Cost.String(),
			MetaMessages: l.MetaMessages, MetaFree: l.MetaFree, MetaCost: l.MetaCost.String(), CostDiff: l.CostDiff.String()})
		diff += l.CostDiff
	}
	out.Diff = diff.String()
	return out
}

// fileEstimate prices a file being checked or planned: nil when no rate
// card was ever imported (nothing to say), else the estimate or why there
// is none.
func fileEstimate(ctx context.Context, st *store.Store, sum runner.Summary, spec campaign.Spec, at time.Time) *campaignCostJSON {
	cards, err := st.Cards(ctx)
	if err != nil || len(cards) == 0 {
		return nil
	}
	p, err := runner.PricingFor(ctx, st, spec, "", at)
	if err != nil {
		return &campaignCostJSON{NoEstimate: err.Error()}
	}
	out := newCampaignCostJSON(runner.CampaignCost{Pricing: p, Estimate: runner.EstimatePlaces(p, sum.Places)})
	out.Actual = nil
	return out
}

// printFileEstimate is check's and plan's estimate on a terminal: the
// total, a line per market × category, what could not be priced, and the
// tiers and free rules in force on the day.
func printFileEstimate(w io.Writer, e *campaignCostJSON) {
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
func printEstimateRecords(f *Factory, e *campaignCostJSON) error {
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

// costBrief is a campaign's cost for status and show: nil when no rate
// card was ever imported.
func costBrief(ctx context.Context, f *Factory, st *store.Store, c campaign.Campaign) (*report.CampaignCost, error) {
	cards, err := st.Cards(ctx)
	if err != nil || len(cards) == 0 {
		return nil, err
	}
	cost, err := runner.Costs(ctx, st, c, f.Now())
	if err != nil {
		return nil, err
	}
	out := &report.CampaignCost{NotPriced: cost.NoEstimate}
	if b := cost.Budget; b.Max != 0 {
		out.Budget, out.Committed, out.Currency = b.Max.String(), b.Committed.String(), b.Currency
	}
	if cost.NoEstimate == "" {
		out.Currency, out.Estimate, out.Actual = cost.Pricing.Card.Currency, cost.Estimate.Total.String(), cost.Actual.Total.String()
	}
	return out, nil
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
