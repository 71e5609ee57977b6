package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

type reportOptions struct {
	IDs  []int64
	HTML string // a file, or "-" for stdout
}

func newReportCmd(f *Factory) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report ID [ID2] --html FILE",
		Short: "Write a campaign's report as one self-contained HTML file",
		Long: `Write campaign ID's report as one HTML file that needs nothing else: its
styles and charts are inline, and it fetches nothing from anywhere, so it can
be mailed or archived as it is. It shows the funnel sent → delivered → read →
replied, a timeline of requests sent and throttled and of rows failed (per
minute, or per a coarser step over long campaigns), tables by account,
template and country (read from each number's calling code and area), and the
failures by error code with what each code means and its fix. With two IDs
the campaigns are shown side by side.

Its figures are those of ` + "`campaign show --json`" + `. --html - writes the page to
stdout; a FILE is written whole or not at all (a temporary file renamed).`,
		Example: `  wasend report 3 --html campaign-3.html
  wasend report 3 4 --html spring-vs-summer.html
  wasend report 3 --html - | gzip > campaign-3.html.gz`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("give the campaign ID to report on (see `wasend campaign list`)")
			}
			return maxArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.HTML == "" {
				return usagef("--html FILE is required: where to write the report (- for stdout)")
			}
			o.IDs = nil
			for _, a := range args {
				id, err := parseID(a)
				if err != nil {
					return err
				}
				o.IDs = append(o.IDs, id)
			}
			if len(o.IDs) == 2 && o.IDs[0] == o.IDs[1] {
				return usagef("campaign %d given twice: give two different IDs to compare", o.IDs[0])
			}
			return reportRun(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.HTML, "html", "", "write the report to `FILE` (- for stdout)")
	return cmd
}

func reportRun(ctx context.Context, f *Factory, o reportOptions) error {
	loc, err := f.Location()
	if err != nil {
		return err
	}
	return f.withStore(ctx, func(st driver.Driver) error {
		// The cost is show's: runner prices each campaign once.
		cost := func(ctx context.Context, c campaign.Campaign) (*report.Costing, error) {
			cc, err := runner.PricedCosts(ctx, st, c, f.Now())
			if cc == nil || err != nil {
				return nil, err
			}
			costing := cc.Costing()
			return &costing, nil
		}
		write := func(w io.Writer) error {
			return f.reporter(st).HTML(ctx, w, readmodel.New(st), o.IDs, loc, cost)
		}
		if o.HTML == "-" {
			return write(f.IO.Out)
		}
		if err := writeFileAtomic("--html", o.HTML, 0o644, write); err != nil {
			return err
		}
		f.IO.Infof("wrote the report of %s to %s", campaignsText(o.IDs), o.HTML)
		return nil
	})
}

func campaignsText(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("campaign %d", ids[0])
	}
	return fmt.Sprintf("campaigns %d and %d", ids[0], ids[1])
}
