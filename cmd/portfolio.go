package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store/driver"
)

func newPortfolioCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "portfolio",
		Short: "Manage business portfolios and their shared messaging limit",
		Long: `Meta's messaging limit belongs to a business portfolio and is shared by all
its numbers: at most 250, 2,000, 10,000, 100,000 or unlimited distinct
recipients of business-initiated messages in any moving 24 hours. Put the
accounts of one portfolio in one wasend portfolio
(` + "`account add|set --portfolio NAME`" + `); an account without one is a portfolio
of its own. Before each send the
recipient is admitted against the portfolio: someone its numbers messaged
in the last 24 hours costs nothing, anyone else one unit of the limit minus
the margin.`,
	}
	cmd.AddCommand(newPortfolioAddCmd(f), newPortfolioListCmd(f), newPortfolioSetCmd(f))
	return cmd
}

// portfolioOptions are the settings of portfolio add and set.
type portfolioOptions struct {
	Name   string
	Limit  string
	Margin string
}

// parse reads the flags that were given into a change.
func (o portfolioOptions) parse(cmd *cobra.Command) (driver.PortfolioChange, error) {
	var ch driver.PortfolioChange
	fl := cmd.Flags()
	if fl.Changed("limit") {
		n, err := campaign.ParseLimit(o.Limit)
		if err != nil {
			return ch, usagef("--limit: %v", err)
		}
		n = max(n, 0) // unlimited pins nothing
		ch.PinnedLimit = &n
	}
	if fl.Changed("margin") {
		m, err := parsePercent(o.Margin)
		if err != nil {
			return ch, usagef("--margin: %v", err)
		}
		ch.Margin = &m
	}
	return ch, nil
}

// parsePercent reads "5%", "5" or "0.5%" as a fraction below 1.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || !(v >= 0 && v < 100) {
		return 0, fmt.Errorf("%q: want a percentage from 0%% to below 100%%, such as 5%%", s)
	}
	return v / 100, nil
}

func addPortfolioFlags(cmd *cobra.Command, o *portfolioOptions) {
	cmd.Flags().StringVar(&o.Limit, "limit", "", "pin the messaging limit: 250, 2k, 10k, 100k or unlimited (the lower of it and the limit read from Meta applies)")
	cmd.Flags().StringVar(&o.Margin, "margin", "5%", "share of the limit kept back")
}

func newPortfolioAddCmd(f *Factory) *cobra.Command {
	var o portfolioOptions
	cmd := &cobra.Command{
		Use:   "add NAME [--limit 250|2k|10k|100k|unlimited] [--margin 5%]",
		Short: "Add a business portfolio",
		Long: `Add a business portfolio. --limit pins its messaging limit (distinct recipients
in any 24 hours); the limit read from Meta (` + "`wasend account sync`" + `) applies
when it is lower. Without either nothing is held back. --margin keeps a
share of the limit unused (default 5%).`,
		Example: `  wasend portfolio add acme --limit 2k
  wasend account set main-01 --portfolio acme`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := o.parse(cmd)
			if err != nil {
				return err
			}
			p := campaign.Portfolio{Name: args[0], Margin: driver.DefaultMargin}
			if ch.PinnedLimit != nil {
				p.PinnedLimit = *ch.PinnedLimit
			}
			if ch.Margin != nil {
				p.Margin = *ch.Margin
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				p, err := st.AddPortfolio(cmd.Context(), p)
				if err != nil {
					return err
				}
				f.IO.Infof("added portfolio %s (limit %s, margin %s)", p.Name, formatLimit(p.PinnedLimit), formatPercent(p.Margin))
				return nil
			})
		},
	}
	addPortfolioFlags(cmd, &o)
	return cmd
}

func newPortfolioSetCmd(f *Factory) *cobra.Command {
	var o portfolioOptions
	cmd := &cobra.Command{
		Use:   "set NAME [--limit 250|2k|10k|100k|unlimited] [--margin 5%]",
		Short: "Change a portfolio's pinned limit or margin",
		Long: `Change a portfolio. --limit unlimited removes the pin (the limit read from Meta
applies alone). Running campaigns pick the change up at their next claim.`,
		Example: `  wasend portfolio set acme --limit 10k --margin 2%`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := o.parse(cmd)
			if err != nil {
				return err
			}
			if ch.PinnedLimit == nil && ch.Margin == nil {
				return usagef("nothing to change: give --limit or --margin")
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				p, err := st.UpdatePortfolio(cmd.Context(), args[0], ch)
				if err != nil {
					return err
				}
				f.IO.Infof("portfolio %s: limit %s, margin %s", p.Name, formatLimit(p.PinnedLimit), formatPercent(p.Margin))
				return nil
			})
		},
	}
	addPortfolioFlags(cmd, &o)
	return cmd
}

func newPortfolioListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List portfolios with their messaging limit and the reach used",
		Long: `List every portfolio, then every account without one as a portfolio of its
own: the pinned limit and the limit read from Meta with where each came
from, the limit that applies, the margin, the distinct recipients messaged
in the last 24 hours and when the oldest of them leaves the window.`,
		Example: `  wasend portfolio list
  wasend portfolio list --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				ps, err := st.Portfolios(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return f.IO.JSON(report.Portfolios(ps))
				}
				return printPortfolios(f, ps)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func printPortfolios(f *Factory, ps []campaign.PortfolioStatus) error {
	loc := f.location()
	t := newTable(f, "PORTFOLIO", "ACCOUNTS", "PINNED", "READ", "APPLIES", "MARGIN", "USED 24H", "ROOM AGAIN").Kind("portfolio")
	for _, p := range ps {
		name := p.Name
		if p.Own {
			name += " (own)"
		}
		t.Row(name, strings.Join(p.Accounts, ","), pinnedText(p), readText(p, loc), appliesText(p),
			formatPercent(p.Margin), usedText(p), roomText(p, loc))
	}
	return t.Render()
}

func formatLimit(n int) string { return report.FormatLimit(n) }

func formatPercent(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

func pinnedText(p campaign.PortfolioStatus) string {
	if p.PinnedLimit <= 0 {
		return "-"
	}
	return strconv.Itoa(p.PinnedLimit) + " (--limit)"
}

func readText(p campaign.PortfolioStatus, loc *time.Location) string {
	if p.ReadLimit == 0 {
		return "not read"
	}
	return fmt.Sprintf("%s (%s, %s)", formatLimit(p.ReadLimit), p.ReadFrom, p.ReadAt.In(loc).Format("01-02 15:04"))
}

func appliesText(p campaign.PortfolioStatus) string {
	if p.Limit <= 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%d after margin)", p.Limit, p.Allowed)
}

func usedText(p campaign.PortfolioStatus) string {
	if p.Limit <= 0 {
		return strconv.Itoa(p.Used)
	}
	return fmt.Sprintf("%d/%d", p.Used, p.Allowed)
}

func roomText(p campaign.PortfolioStatus, loc *time.Location) string {
	if p.Limit <= 0 || p.Used < p.Allowed || p.FreesAt.IsZero() {
		return "-"
	}
	return p.FreesAt.In(loc).Format("01-02 15:04:05")
}
