package cmd

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

func newPricingCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pricing",
		Short: "Keep Meta's rate cards: what a template message costs, by market and category",
		Long: `Meta charges per delivered template message, by its category (marketing,
utility, authentication) and the recipient's market, from rate cards it
publishes per currency and changes on announced dates. wasend keeps the cards
you import, each from its effective date, and prices campaigns with the one
in force: campaign check and plan estimate, campaign show, status --json,
export and wasend cost show the actual cost, and campaign run --max-cost
stops before a budget is passed. See docs/cost.md.`,
	}
	cmd.AddCommand(newPricingImportCmd(f), newPricingListCmd(f))
	return cmd
}

type pricingImportOptions struct {
	File, Tiers      string
	Effective, Until string
}

func newPricingImportCmd(f *Factory) *cobra.Command {
	var o pricingImportOptions
	cmd := &cobra.Command{
		Use:   "import CARD.csv --effective DATE",
		Short: "Import a rate card in force from a date",
		Long: `Read a rate card in Meta's CSV shape — a header with Market, Currency,
Marketing, Utility and Authentication (Authentication-International and
Service when the card has them), then a row per market; lines before the
header are skipped — and keep it from --effective (YYYY-MM-DD, UTC) until
the currency's next card, or --until. --tiers adds volume tiers (Market,
Category, From, To, Price). A missing column, a negative or non-numeric
price, an unknown currency or dates that overlap another card of the
currency are refused with the file, line and column, and nothing of the card
is stored.`,
		Example: `  wasend pricing import rates-usd.csv --effective 2026-10-01
  wasend pricing import rates-eur.csv --effective 2025-07-01 \
      --until 2026-10-01 --tiers tiers-eur.csv`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return pricingImport(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Effective, "effective", "", "first `DATE` the card prices (YYYY-MM-DD, UTC); required")
	fl.StringVar(&o.Until, "until", "", "first `DATE` it no longer prices (default: the currency's next card)")
	fl.StringVar(&o.Tiers, "tiers", "", "volume tiers `FILE` (Market, Category, From, To, Price)")
	return cmd
}

func pricingImport(ctx context.Context, f *Factory, o pricingImportOptions) error {
	if o.Effective == "" {
		return usagef("--effective DATE is required, e.g. --effective 2026-10-01")
	}
	eff, err := time.Parse(time.DateOnly, o.Effective)
	if err != nil {
		return usagef("--effective %q: want a date such as 2026-10-01", o.Effective)
	}
	var until time.Time
	if o.Until != "" {
		if until, err = time.Parse(time.DateOnly, o.Until); err != nil || !until.After(eff) {
			return usagef("--until %q: want a date after --effective, such as 2027-01-01", o.Until)
		}
	}
	card, err := runner.ReadCard(runner.CardImport{File: o.File, Tiers: o.Tiers, Effective: eff, Until: until})
	if err != nil {
		return err
	}
	return f.withStore(ctx, func(st driver.Driver) error {
		id, err := st.ImportCard(ctx, card)
		if err != nil {
			return err
		}
		f.IO.Infof("card %d: %d markets in %s from %s%s", id, len(card.Rates), card.Currency, o.Effective, map[bool]string{true: " until " + o.Until}[o.Until != ""])
		return nil
	})
}

func newPricingListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the rate cards and when each is in force",
		Long: `List the rate cards imported, newest first: each one's currency, the first
day it prices, the day it stops (or "(next card)": the currency's next card
takes over), its markets, whether it has volume tiers, whether it is the one
in force today, and the file it came from.`,
		Example: `  wasend pricing list
  wasend pricing list --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				return pricingList(cmd.Context(), f, st, asJSON)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func pricingList(ctx context.Context, f *Factory, st driver.Driver, asJSON bool) error {
	out, err := runner.RateCards(ctx, st, f.Now())
	if err != nil {
		return err
	}
	if asJSON {
		return f.IO.JSON(out)
	}
	if len(out) == 0 {
		f.IO.Infof("no rate cards; import one with `wasend pricing import CARD.csv --effective DATE`")
		return nil
	}
	t := newTable(f, "ID", "CURRENCY", "FROM", "UNTIL", "MARKETS", "TIERS", "IN FORCE", "FILE").Truncate("FILE")
	for _, c := range slices.Backward(out) {
		until := c.Until
		if until == "" {
			until = "(next card)"
		}
		t.Row(fmt.Sprint(c.ID), c.Currency, c.Effective, until, fmt.Sprint(c.Markets), yesNo(c.Tiers), yesNo(c.InForce), c.Source)
	}
	return t.Render()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
