package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hostshare"
)

func newTierCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tier",
		Short: "Show or change the limits of the new, warm and active tiers",
		Long: `Every account belongs to a tier. Built-in settings:
  new     1 message / 12s, burst 5,  50 a day
  warm    1 message / 8s,  burst 8,  150 a day
  active  1 message / 5s,  burst 15, 300 a day
A change takes effect in running campaigns within seconds; tokens already
earned are kept. With --limits (or $WASEND_LIMITS) tier set changes the tier
for every host: it is stored in Redis too, and senders run with --limits
apply it within seconds.`,
	}
	cmd.AddCommand(newTierListCmd(f), newTierSetCmd(f))
	return cmd
}

func newTierListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tiers and their limits",
		Long: `List the new, warm and active tiers with their current rate, burst and daily
cap, and the built-in defaults they started from. With --limits (or
$WASEND_LIMITS) the settings shared by every host are shown where a tier was
set for every host, with a SHARED column saying so and what this database
still has when it differs (a sender run with --limits copies it within
seconds); a tier never set for every host keeps this host's own.`,
		Example: `  wasend tier list
  wasend tier list --json
  wasend tier list --limits redis://redis.internal:6379/0`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withRecord(cmd.Context(), func(rec *hostshare.Record) error {
				return tierList(cmd.Context(), f, rec, asJSON)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// tierJSON is a tier in tier list --json. Shared and ThisDatabase are
// there only with --limits: whether the tier is set for every host, and
// this database's settings when they differ from the shared ones.
type tierJSON struct {
	Name         string          `json:"name"`
	Rate         float64         `json:"rate_per_second"`
	Burst        int             `json:"burst"`
	DailyCap     int             `json:"daily_cap"`
	Shared       *bool           `json:"shared,omitempty"`
	ThisDatabase *tierLimitsJSON `json:"this_database,omitempty"`
}

type tierLimitsJSON struct {
	Rate     float64 `json:"rate_per_second"`
	Burst    int     `json:"burst"`
	DailyCap int     `json:"daily_cap"`
}

// tierList prints the tiers as the record has them: this database's, or
// under --limits the shared settings where a tier has them.
func tierList(ctx context.Context, f *Factory, rec *hostshare.Record, asJSON bool) error {
	tiers, err := rec.Tiers(ctx)
	if err != nil {
		return err
	}
	out := make([]tierJSON, 0, len(tiers))
	for _, tr := range tiers {
		l := tr.Limits
		j := tierJSON{Name: tr.Name, Rate: l.Rate, Burst: l.Burst, DailyCap: l.DailyCap}
		if rec.Shared() {
			shared := tr.Shared
			j.Shared = &shared
			if shared && l != tr.Tier.Limits {
				j.ThisDatabase = &tierLimitsJSON{tr.Tier.Limits.Rate, tr.Tier.Limits.Burst, tr.Tier.Limits.DailyCap}
			}
		}
		out = append(out, j)
	}
	if asJSON {
		return f.IO.JSON(out)
	}
	head := []string{"TIER", "RATE", "BURST", "DAILY CAP", "DEFAULTS"}
	if rec.Shared() {
		head = append(head, "SHARED")
	}
	t := newTable(f, head...)
	for i, tr := range tiers {
		j, d := out[i], tr.Defaults
		row := []string{tr.Name, formatRate(j.Rate), strconv.Itoa(j.Burst), strconv.Itoa(j.DailyCap),
			formatRate(d.Rate) + " burst " + strconv.Itoa(d.Burst) + " cap " + strconv.Itoa(d.DailyCap)}
		if rec.Shared() {
			switch {
			case !*j.Shared:
				row = append(row, "no: this host's own")
			case j.ThisDatabase != nil:
				l := tr.Tier.Limits
				row = append(row, "yes; this database has "+formatRate(l.Rate)+" burst "+strconv.Itoa(l.Burst)+" cap "+strconv.Itoa(l.DailyCap)+" until a sender copies it")
			default:
				row = append(row, "yes")
			}
		}
		t.Row(row...)
	}
	return t.Render()
}

func newTierSetCmd(f *Factory) *cobra.Command {
	var (
		rate            float64
		every           time.Duration
		burst, dailyCap int
		defaults        bool
	)
	cmd := &cobra.Command{
		Use:   "set NAME [--rate PER_SECOND | --every DURATION] [--burst N] [--daily-cap N]",
		Short: "Change a tier's limits",
		Long: `Change the rate (--rate per second, or --every interval), burst or daily cap
of a tier for every account on it that has no override of its own. Running
campaigns pick the change up within seconds; tokens already earned are kept.
--defaults starts from the built-in values. With --limits (or $WASEND_LIMITS)
the change is stored in Redis too, starting from the value Redis has, and
senders run with --limits on every host apply it within seconds.`,
		Example: `  wasend tier set new --every 10s --burst 5 --daily-cap 80
  wasend tier set active --rate 0.5
  wasend tier set warm --defaults`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !campaign.ValidTier(name) {
				return usagef("tier %q: must be one of new, warm, active", name)
			}
			return f.withRecord(cmd.Context(), func(rec *hostshare.Record) error {
				l, err := rec.Tier(cmd.Context(), name)
				if err != nil {
					return err
				}
				if defaults {
					l = campaign.DefaultTiers[name]
				}
				r, ok, err := rateFromFlags(cmd, rate, every)
				if err != nil {
					return err
				}
				if ok {
					l.Rate = r
				}
				if cmd.Flags().Changed("burst") {
					l.Burst = burst
				}
				if cmd.Flags().Changed("daily-cap") {
					l.DailyCap = dailyCap
				}
				if err := l.Validate(); err != nil {
					return usageError{err}
				}
				if err := rec.SetTier(cmd.Context(), name, l); err != nil {
					return err
				}
				f.IO.Infof("tier %s: rate %s, burst %d, daily cap %d", name, formatRate(l.Rate), l.Burst, l.DailyCap)
				if rec.Shared() {
					f.IO.Infof("set for every host (--limits); senders on other hosts apply it within seconds")
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&rate, "rate", 0, "messages per second")
	fl.DurationVar(&every, "every", 0, "one message per this interval, e.g. 12s")
	fl.IntVar(&burst, "burst", 0, "bucket size: messages that may go at once")
	fl.IntVar(&dailyCap, "daily-cap", 0, "messages per account per quota day")
	fl.BoolVar(&defaults, "defaults", false, "start from the built-in settings")
	return cmd
}

func newLimitCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "limit",
		Aliases: []string{"limits"},
		Short:   "Limits over all accounts, and those shared between hosts",
	}
	cmd.AddCommand(newLimitStatusCmd(f))
	cmd.AddCommand(newLimitsAddLostHostCmd(f))
	var (
		rate  float64
		every time.Duration
		burst int
		off   bool
	)
	global := &cobra.Command{
		Use:   "global [--rate R | --every D] [--burst N] | --off",
		Short: "Show, set or turn off the global bucket shared by all accounts",
		Long: `The global bucket is an optional token bucket over every account together:
each send takes a token from its account's bucket and from this one. It is
off by default. Without flags, the current setting is printed. With --limits
(or $WASEND_LIMITS) a change is stored in Redis too, for every host: senders
run with --limits apply it within seconds; without flags it prints the
shared setting, and what this database has when that differs.`,
		Example: `  wasend limit global --rate 2 --burst 10
  wasend limit global --off`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withRecord(cmd.Context(), func(rec *hostshare.Record) error {
				r, haveRate, err := rateFromFlags(cmd, rate, every)
				if err != nil {
					return err
				}
				switch {
				case off:
					if haveRate || cmd.Flags().Changed("burst") {
						return usagef("--off excludes --rate, --every and --burst")
					}
					if err := rec.SetGlobal(cmd.Context(), hostshare.GlobalSetting{}); err != nil {
						return err
					}
					f.IO.Infof("global limit: off")
					if rec.Shared() {
						f.IO.Infof("set for every host (--limits); senders on other hosts apply it within seconds")
					}
					return nil
				case haveRate || cmd.Flags().Changed("burst"):
					l, err := rec.GlobalBefore(cmd.Context())
					if err != nil {
						return err
					}
					if haveRate {
						l.Rate = r
					}
					if cmd.Flags().Changed("burst") {
						l.Burst = burst
					}
					if err := (campaign.Limits{Rate: l.Rate, Burst: l.Burst}).Validate(); err != nil {
						return usageError{fmt.Errorf("global limit: %w", err)}
					}
					err = rec.SetGlobal(cmd.Context(), hostshare.GlobalSetting{On: true, Limit: l})
					var dbErr *hostshare.DatabaseError
					if err != nil && !errors.As(err, &dbErr) {
						return err
					}
					if rec.Shared() {
						f.IO.Infof("set for every host (--limits); senders on other hosts apply it within seconds")
					}
					if dbErr != nil {
						return usageError{dbErr.Err}
					}
				}
				return printGlobal(cmd.Context(), f, rec)
			})
		},
	}
	fl := global.Flags()
	fl.Float64Var(&rate, "rate", 0, "messages per second over all accounts")
	fl.DurationVar(&every, "every", 0, "one message per this interval over all accounts")
	fl.IntVar(&burst, "burst", 0, "bucket size")
	fl.BoolVar(&off, "off", false, "turn the global bucket off")
	cmd.AddCommand(global)
	return cmd
}

// printGlobal prints the global limit: this database's, and under --limits
// whether it is the one every host shares.
func printGlobal(ctx context.Context, f *Factory, rec *hostshare.Record) error {
	g, err := rec.Global(ctx)
	if err != nil {
		return err
	}
	setting := func(g hostshare.GlobalSetting) string {
		if !g.On {
			return "off"
		}
		return "rate " + formatRate(g.Limit.Rate) + ", burst " + strconv.Itoa(g.Limit.Burst)
	}
	db := g.Database
	local := setting(db)
	if db.On {
		local += ", tokens now " + strconv.FormatFloat(g.Tokens, 'f', 1, 64)
	}
	line := "global limit: " + local
	if rec.Shared() {
		switch sh := g.Shared; {
		case sh == nil:
			line += " (this host's own: not set for every host)"
		case sh.On == db.On && (!db.On || sh.Limit == db.Limit):
			line += " (shared by every host)"
		default:
			line = "global limit: " + setting(*sh) + " (shared by every host); this database has " +
				setting(db) + " until a sender with --limits copies it"
		}
	}
	_, err = f.IO.Out.Write([]byte(line + "\n"))
	return err
}
