package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// settings are the keys `wasend config` knows.
var settings = []string{"timezone"}

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Settings stored in the database",
		Long: `Settings kept in the database itself, shared by every wasend using it.

timezone   the IANA zone whose calendar days are quota days. It is fixed on
           first use ($WASEND_TZ, else the local zone); a WASEND_TZ that
           disagrees cannot start a quota day. Quota days only move forward:
           after a change to a zone behind the old one, the current day lasts
           until the new zone's calendar passes it.`,
	}
	get := &cobra.Command{
		Use:     "get KEY",
		Short:   "Print a setting",
		Long:    "Print a setting of the database: timezone, the IANA zone of quota days.",
		Example: `  wasend config get timezone`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := knownSetting(args[0]); err != nil {
				return err
			}
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				_, err := fmt.Fprintln(f.IO.Out, st.Location())
				return err
			})
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change a setting",
		Long: `Change a setting of the database. timezone takes an IANA zone name (UTC,
Europe/Berlin, America/New_York); quota days follow it from the next
` + "`wasend quota reset`" + `, and never move back to an earlier day.`,
		Example: `  wasend config set timezone Europe/Berlin`,
		Args:    exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := knownSetting(args[0]); err != nil {
				return err
			}
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				old, err := st.SetTimezone(cmd.Context(), args[1])
				if errors.Is(err, campaign.ErrUnknownZone) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(f.IO.Out, "timezone: %s (was %s); quota days only move forward\n", args[1], old)
				return err
			})
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}

func knownSetting(key string) error {
	for _, k := range settings {
		if k == key {
			return nil
		}
	}
	return usagef("unknown setting %q: known are %v", key, settings)
}
