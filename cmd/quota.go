package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wasend/wasend/internal/store"
)

func newQuotaCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Daily quotas of the accounts",
	}
	var (
		accounts []string
		force    bool
	)
	reset := &cobra.Command{
		Use:   "reset [--account NAME]... [--force]",
		Short: "Start a new quota day (run it from cron at midnight)",
		Long: `Start a new quota day: each account's count of messages sent today goes back
to zero. A second run on the same calendar day changes nothing unless --force
is given, so a cron line that fires twice cannot double a cap. Calendar days
follow $WASEND_TZ (an IANA zone such as Europe/Berlin), else local time.
A campaign waiting on caps continues within seconds.

Crontab line:
  0 0 * * * wasend quota reset`,
		Example: `  wasend quota reset
  wasend quota reset --account fresh-02 --force`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				res, err := st.ResetQuota(cmd.Context(), accounts, force)
				if err != nil {
					return err
				}
				if len(res) == 0 {
					f.IO.Infof("no accounts to reset")
				}
				for _, r := range res {
					if r.Reset {
						fmt.Fprintf(f.IO.Out, "%s: new quota day %s (was %d/%d on %s)\n", r.Account, r.Day, r.Before, r.DailyCap, r.LastDay)
					} else {
						fmt.Fprintf(f.IO.Out, "%s: already reset on %s, unchanged (%d/%d); use --force to reset again\n", r.Account, r.Day, r.Before, r.DailyCap)
					}
				}
				return nil
			})
		},
	}
	reset.Flags().StringSliceVar(&accounts, "account", nil, "reset only this account (repeatable)")
	reset.Flags().BoolVar(&force, "force", false, "reset even if already reset today")
	cmd.AddCommand(reset)
	return cmd
}
