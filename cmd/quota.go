package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/store/driver"
)

func newQuotaCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Daily quotas of the accounts",
	}
	var (
		accounts []string
		force    bool
		asJSON   bool
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

It ends saying when the next quota day starts, in the zone of quota days
and in this server's local zone: cron fires at the server's midnight
unless the crontab sets CRON_TZ to the zone of quota days.

Crontab lines (cron's environment has neither your PATH nor WASEND_DB, and
its midnight is the server's unless CRON_TZ says otherwise):
  CRON_TZ=Europe/Berlin
  WASEND_DB=/var/lib/wasend/wasend.db
  0 0 * * * /usr/local/bin/wasend quota reset`,
		Example: `  wasend quota reset
  wasend quota reset --account fresh-02 --force
  wasend quota reset --force --limits redis://redis.internal:6379/0`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
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
				var zerr *campaign.ZoneMismatchError
				if errors.As(err, &zerr) {
					return fmt.Errorf("refusing to start a quota day by another zone's calendar: WASEND_TZ=%s, but the database's quota days are in %s; "+
						"unset WASEND_TZ or set it to %s, or change the database's zone with `wasend config set timezone %s`: %w",
						zerr.Requested, zerr.Stored, zerr.Stored, zerr.Requested, err)
				}
				if err != nil {
					return err
				}
				next := nextQuotaDay(f.Now(), st.Location(), time.Local)
				if asJSON {
					if err := f.IO.JSON(quotaResetJSON{Accounts: resetRows(res, rebuilt), NextQuotaDay: next}); err != nil {
						return err
					}
				} else {
					printQuotaReset(f, res, rebuilt)
					f.IO.Infof("%s", next.text())
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
	addJSONFlag(reset, &asJSON)
	cmd.AddCommand(reset)
	return cmd
}

// printQuotaReset prints one line per account reset (or left alone).
func printQuotaReset(f *Factory, res []campaign.QuotaReset, rebuilt map[string]bool) {
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
}

// quotaResetJSON is `quota reset --json`.
type quotaResetJSON struct {
	Accounts     []quotaResetRow  `json:"accounts"`
	NextQuotaDay nextQuotaDayJSON `json:"next_quota_day"`
}

type quotaResetRow struct {
	Account  string `json:"account"`
	Day      string `json:"quota_day"`      // the account's open quota day after the run
	LastDay  string `json:"last_quota_day"` // before the run
	Before   int    `json:"sent_before"`
	DailyCap int    `json:"daily_cap"`
	Reset    bool   `json:"reset"`  // the count went back to zero
	Behind   bool   `json:"behind"` // today is earlier than the open quota day
	Kept     bool   `json:"kept"`   // the shared day was rebuilt from this count
}

func resetRows(res []campaign.QuotaReset, rebuilt map[string]bool) []quotaResetRow {
	rows := make([]quotaResetRow, 0, len(res))
	for _, r := range res {
		day := r.Day
		if r.Behind || !r.Reset && rebuilt[r.Account] {
			day = r.LastDay
		}
		rows = append(rows, quotaResetRow{Account: r.Account, Day: day, LastDay: r.LastDay, Before: r.Before,
			DailyCap: r.DailyCap, Reset: r.Reset, Behind: r.Behind, Kept: rebuilt[r.Account] && !r.Reset})
	}
	return rows
}

// nextQuotaDayJSON is when the next quota day starts, in the zone of quota
// days and in the server's local zone, where cron's midnight is (unless
// the crontab sets CRON_TZ).
type nextQuotaDayJSON struct {
	At        time.Time `json:"at"`
	Zone      string    `json:"zone"`
	Local     time.Time `json:"local"`
	LocalZone string    `json:"local_zone"`
	// SameMidnight: the server's midnight is the quota day's, so a plain
	// `0 0 * * *` line without CRON_TZ fires on time.
	SameMidnight bool `json:"same_midnight"`
}

// nextQuotaDay is when the quota day after now's starts, in quota (the
// database's zone of quota days) and in local (the server's zone).
func nextQuotaDay(now time.Time, quota, local *time.Location) nextQuotaDayJSON {
	at := campaign.NextQuotaDay(now, quota)
	l := at.In(local)
	return nextQuotaDayJSON{At: at, Zone: quota.String(), Local: l, LocalZone: local.String(),
		SameMidnight: l.Hour() == 0 && l.Minute() == 0 && l.Second() == 0}
}

// text is the line quota reset ends with: the cron-fired-at-the-wrong-
// midnight case says so, and the CRON_TZ line that fixes it.
func (n nextQuotaDayJSON) text() string {
	const layout = "2006-01-02 15:04 MST"
	if n.SameMidnight {
		return fmt.Sprintf("next quota day starts %s (%s; midnight here too, %s)", n.At.Format(layout), n.Zone, n.LocalZone)
	}
	return fmt.Sprintf("next quota day starts %s (%s), which is %s here (%s): cron fires at this server's midnight unless the crontab sets CRON_TZ=%s",
		n.At.Format(layout), n.Zone, n.Local.Format(layout), n.LocalZone, n.Zone)
}
