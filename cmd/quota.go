package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wasend/wasend/internal/hostshare"
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
to zero. Quota days only move forward: a second run on the same calendar day,
or on a clock set back, changes nothing unless --force is given (which zeroes
the count but never moves the day back), so a cron line that fires twice
cannot double a cap. Calendar days follow the zone fixed in the database on
first use ($WASEND_TZ, else local time; see wasend config get timezone). A
WASEND_TZ that disagrees is refused. A campaign waiting on caps continues
within seconds.

With --limits (or WASEND_LIMITS) the quota day also starts in the limits
shared through Redis, by the same rule: every host's cron line may run it,
and the first one on a new day starts it. After Redis lost its data (a
restart without persistence) nothing is sent until a reset with --force
rebuilds the day: it adds this host's count of the day, its recipients of
the last 24 h and its messages' repeat guards to Redis, once, and keeps its
own count (nothing is zeroed). Every other host adds its part by itself
before it sends again; the count of a host that will not return is added
with ` + "`wasend limits add-lost-host`" + `.

Crontab line (cron's environment has neither your PATH nor WASEND_DB, so
name both):
  0 0 * * * /usr/local/bin/wasend --db /var/lib/wasend/wasend.db quota reset`,
		Example: `  wasend quota reset
  wasend quota reset --account fresh-02 --force
  wasend quota reset --force --limits redis://redis.internal:6379/0`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				// Forced with shared limits, the shared part goes first: a
				// portfolio whose day Redis lost is rebuilt from this host's
				// counts, which must stay as they are.
				var (
					rebuilt   map[string]bool
					sharedErr error
					sharedRan bool
				)
				if force && f.LimitsURL() != "" {
					rebuilt, sharedErr = resetSharedQuota(cmd.Context(), f, st, accounts, force)
					sharedRan = true
				}
				res, err := hostshare.ResetDatabaseQuota(cmd.Context(), st, accounts, force, rebuilt)
				var zerr *store.ZoneMismatchError
				if errors.As(err, &zerr) {
					return fmt.Errorf("refusing to start a quota day by another zone's calendar: WASEND_TZ=%s, but the database's quota days are in %s; "+
						"unset WASEND_TZ or set it to %s, or change the database's zone with `wasend config set timezone %s`: %w",
						zerr.Requested, zerr.Stored, zerr.Stored, zerr.Requested, err)
				}
				if err != nil {
					return err
				}
				if len(res) == 0 {
					f.IO.Infof("no accounts to reset")
				}
				for _, r := range res {
					switch {
					case rebuilt[r.Account] && !r.Reset:
						fmt.Fprintf(f.IO.Out, "%s: count kept on quota day %s (%d/%d): the shared day was rebuilt from it\n", r.Account, r.Day, r.Before, r.DailyCap)
					case r.Reset && r.Behind:
						fmt.Fprintf(f.IO.Out, "%s: count reset on quota day %s (was %d/%d); today is %s here, and quota days only move forward\n",
							r.Account, r.LastDay, r.Before, r.DailyCap, r.Day)
					case r.Reset:
						fmt.Fprintf(f.IO.Out, "%s: new quota day %s (was %d/%d on %s)\n", r.Account, r.Day, r.Before, r.DailyCap, r.LastDay)
					case r.Behind:
						fmt.Fprintf(f.IO.Out, "%s: quota day %s is still open: today is %s here (a clock set back, or a zone changed), unchanged (%d/%d)\n",
							r.Account, r.LastDay, r.Day, r.Before, r.DailyCap)
					default:
						fmt.Fprintf(f.IO.Out, "%s: already reset on %s, unchanged (%d/%d); use --force to reset again\n", r.Account, r.Day, r.Before, r.DailyCap)
					}
					if p := r.Promoted; p != nil {
						fmt.Fprintf(f.IO.Out, "%s: promoted %s → %s (%s)\n", r.Account, p.From, p.To, p.Reason)
					}
				}
				if sharedRan {
					return sharedErr
				}
				_, err = resetSharedQuota(cmd.Context(), f, st, accounts, force)
				return err
			})
		},
	}
	reset.Flags().StringSliceVar(&accounts, "account", nil, "reset only this account (repeatable)")
	reset.Flags().BoolVar(&force, "force", false, "reset even if already reset today")
	cmd.AddCommand(reset)
	return cmd
}
