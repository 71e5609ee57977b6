package cmd

import (
	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
)

func newCampaignPreviewCmd(f *Factory) *cobra.Command {
	var (
		o   runOptions
		row int
	)
	cmd := &cobra.Command{
		Use:   "preview FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT) [--row N]",
		Short: "Print the exact request body one row of a recipient file would be sent as",
		Long: `Read FILE.csv as ` + "`campaign run`" + ` would, with the same message flags, and
print the JSON body of the Cloud API request for one row: data row N with
--row N (1 is the first record after the header), else the first usable row.
The campaign and message numbers in biz_opaque_callback_data are placeholders.
Nothing is stored or sent, and the database is not read: duplicates and the
suppression list are left to ` + "`campaign check`" + `. A row that would be skipped
prints its reason and exits 1.`,
		Example: `  wasend campaign preview promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign preview orders.csv --template order_update --lang en \
      --params customer_name --named-params --header-image banner \
      --button-param 0=order_path --row 3`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("report") {
				return usagef("--report is for run and check; preview shows one row")
			}
			if row < 0 {
				return usagef("--row %d: must be 1 or more (0: the first usable row)", row)
			}
			o.File = args[0]
			return campaignPreview(f, o, row)
		},
	}
	fl := cmd.Flags()
	addMessageFlags(fl, &o)
	addReadFlags(fl, &o)
	acceptSendFlags(f, cmd)
	_ = fl.MarkHidden("report") // shared with run and check; refused above
	fl.IntVar(&row, "row", 0, "show data row `N` (1: the first after the header; default: the first usable row)")
	return cmd
}

func campaignPreview(f *Factory, o runOptions, n int) error {
	spec, err := o.spec(f.Sandbox)
	if err != nil {
		return err
	}
	ro, err := o.readOptions(f)
	if err != nil {
		return err
	}
	file, err := runner.OpenFile(o.File)
	if err != nil {
		return err
	}
	defer file.Close()
	p, err := runner.PreviewRequest(file, o.File, spec, ro, n)
	if err != nil {
		return err
	}
	f.IO.Infof("phone column: %s", p.Column)
	f.IO.Infof("%s line %d (%s):", o.File, p.Line, p.Phone)
	_, err = f.IO.Out.Write(p.Body)
	return err
}
