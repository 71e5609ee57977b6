package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

func newCampaignImportCmd(f *Factory) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "import FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT)",
		Short: "Import a recipient file into a campaign without sending",
		Long: `Import FILE.csv into a new campaign exactly as ` + "`campaign run`" + ` would — numbers
normalised, parameters checked, duplicates and suppressed numbers skipped, in
one transaction — and stop there. Nothing is sent and no account is needed.

Send it later with ` + "`wasend campaign run --resume ID`" + `, or by running
` + "`campaign run`" + ` with the same file and message flags. A list with the same
message as an unfinished campaign and some of its numbers continues that
campaign (its new numbers are added); --again makes a separate one.`,
		Example: `  wasend campaign import promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign run --resume 3`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return campaignImport(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "", "campaign name (default: the file name)")
	addMessageFlags(fl, &o)
	addReadFlags(fl, &o)
	addScheduleFlags(fl, &o.scheduleOptions)
	addShareFlags(fl, &o.shareOptions)
	acceptSendFlags(f, cmd)
	return cmd
}

func campaignImport(ctx context.Context, f *Factory, o runOptions) error {
	if err := o.checkName(); err != nil {
		return err
	}
	ro, err := o.readOptions(f)
	if err != nil {
		return err
	}
	spec, err := o.spec(f.Sandbox)
	if err != nil {
		return err
	}
	sched, err := o.schedule(f)
	if err != nil {
		return err
	}
	share, err := o.change()
	if err != nil {
		return err
	}
	return f.withStore(ctx, func(st driver.Driver) error {
		if err := f.pullShared(ctx, st); err != nil {
			return err
		}
		res, err := runner.Prepare(ctx, runner.Options{
			Store: st, IO: f.IO, File: o.File, Name: o.Name, Spec: spec, Schedule: sched, Share: share,
			Region: ro.Region, Delimiter: ro.Delimiter, PhoneColumn: ro.PhoneColumn, SkipContactedWithin: ro.SkipContactedWithin,
			Again: ro.Again, Shard: ro.Shard, IgnoreWindow: ro.IgnoreWindow,
		})
		if err != nil {
			return err
		}
		c := res.Campaign
		if err := runner.WriteSkipReport(ctx, st, o.Report, res); err != nil {
			return err
		}
		if !res.Imported && !res.Continued {
			if res.Repeat {
				runner.ReportPrepared(f.IO, res, dbHint(f), f.location())
			}
			fmt.Fprintf(f.IO.Out, "campaign %d %q: already imported from this file and message (%s): %d recipients, skipped %d\n",
				c.ID, c.Name, c.CreatedAt.In(f.location()).Format("2006-01-02 15:04"), c.Imported, c.Skipped)
			return nil
		}
		runner.ReportPrepared(f.IO, res, dbHint(f), f.location())
		fmt.Fprintf(f.IO.Out, "campaign %d %q: %d recipients, skipped %d\n", c.ID, c.Name, c.Imported, c.Skipped)
		f.IO.Infof("send it with: wasend campaign run --resume %d%s", c.ID, dbHint(f))
		return nil
	})
}
