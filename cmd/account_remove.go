package cmd

import (
	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/store/driver"
)

func newAccountRemoveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Stop sending from a number for good, keeping its history",
		Long: `Remove account NAME: it is no longer listed or used by any campaign, and its
name and phone number ID are free for a new account. What it sent stays on
record — attempts, sent messages, quota resets — under "NAME (removed #ID)".

Refused while a running ` + "`campaign run`" + ` has messages in flight through the
account: pause that campaign first, or let it finish. A run that stopped
heartbeating 30 s ago no longer counts as running.`,
		Example: `  wasend account remove fresh-02
  wasend campaign pause 3 && wasend account remove fresh-02 &&
      wasend campaign resume 3`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				a, err := st.Account(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if err := st.RemoveAccount(cmd.Context(), a.Name); err != nil {
					return err
				}
				f.IO.Infof("removed account %s (phone number id %s); its history stays as %q, and the name and number are free again",
					a.Name, a.PhoneNumberID, driver.RemovedName(a.Name, a.ID))
				return nil
			})
		},
	}
}
