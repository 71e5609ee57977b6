package cmd

import (
	"github.com/spf13/cobra"
)

func newCampaignSetCmd(f *Factory) *cobra.Command {
	var o shareOptions
	cmd := &cobra.Command{
		Use:   "set ID [--priority high|normal|low] [--weight N] [--borrow D]",
		Short: "Change how a campaign shares the accounts with other campaigns",
		Long: `Change campaign ID's priority, weight or borrowing, also while it is being
sent: every process sending a campaign on this database reads it at its next
claim.

Between priorities the higher always gets the next token while it has rows to
send. Within a priority, campaigns share each account's tokens by weight. A
high-priority campaign may go up to --borrow of an account's rate (at most its
burst) ahead of the bucket; the debt is paid before anyone else sends.`,
		Example: `  wasend campaign set 3 --priority high
  wasend campaign set 4 --weight 2`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := o.change()
			if err != nil {
				return err
			}
			if ch.IsZero() {
				return usagef("campaign set: say what to change: --priority, --weight or --borrow")
			}
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.SetShare(cmd.Context(), c.ID, ch); err != nil {
				return err
			}
			sh := ch.Apply(c.Share)
			f.IO.Infof("campaign %d: priority %s, weight %d, borrows up to %s", c.ID, sh.Priority, sh.Weight, sh.Borrow)
			return nil
		},
	}
	addShareFlags(cmd.Flags(), &o)
	return cmd
}
