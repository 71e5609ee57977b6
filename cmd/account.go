package cmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/ui"
)

func newAccountCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Manage the WhatsApp business numbers wasend sends from",
		Long: `An account is one WhatsApp business phone number. Its tier (new, warm,
active) decides its rate, burst and daily cap; per-account settings override
the tier. The access token is read from an environment variable when sending
and is never stored or printed.`,
	}
	cmd.AddCommand(newAccountAddCmd(f), newAccountListCmd(f), newAccountSetCmd(f), newAccountRemoveCmd(f), newAccountTestCmd(f))
	return cmd
}

type accountAddOptions struct {
	Name, PhoneNumberID, Tier, TokenEnv string
}

func newAccountAddCmd(f *Factory) *cobra.Command {
	var o accountAddOptions
	cmd := &cobra.Command{
		Use:   "add NAME --phone-number-id ID",
		Short: "Add a sending number",
		Long: `Add a WhatsApp business number to send from. NAME is yours to choose; ID is
the number's phone number ID from WhatsApp Manager. The tier (default new)
sets its pace; --token-env names the environment variable that will hold its
access token when sending (default WASEND_TOKEN). The token itself is never
stored. The account's bucket starts full and its quota day starts today.`,
		Example: `  wasend account add main-01 --phone-number-id 1234567890 --tier active --token-env WA_TOKEN_MAIN
  wasend account add fresh-02 --phone-number-id 2345678901 --tier new --token-env WA_TOKEN_FRESH`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if o.PhoneNumberID == "" {
				return usagef("--phone-number-id is required")
			}
			if !campaign.ValidTier(o.Tier) {
				return usagef("--tier %q: must be one of new, warm, active", o.Tier)
			}
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				a, err := st.AddAccount(cmd.Context(), campaign.Account{
					Name: o.Name, PhoneNumberID: o.PhoneNumberID, Tier: o.Tier, TokenEnv: o.TokenEnv,
				})
				if err != nil {
					return err
				}
				f.IO.Infof("added account %s (tier %s, token from $%s)", a.Name, a.Tier, a.TokenEnv)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&o.PhoneNumberID, "phone-number-id", "", "the number's Cloud API phone number ID")
	cmd.Flags().StringVar(&o.Tier, "tier", campaign.TierNew, "new, warm or active")
	cmd.Flags().StringVar(&o.TokenEnv, "token-env", "WASEND_TOKEN", "environment variable holding the access token")
	return cmd
}

func newAccountListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List accounts with their limits and quota",
		Long: `List every account: tier, configured and effective rate, burst, tokens now,
sent today / daily cap, state and last error code. --json prints the same
fields as ` + "`wasend status --json`" + `'s accounts, without the health figures.`,
		Example: `  wasend account list
  wasend account list --json | jq -r '.[] | select(.state != "ok") | .name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				accts, err := st.Accounts(cmd.Context())
				if err != nil {
					return err
				}
				live, err := st.LiveRunners(cmd.Context(), f.Now().Add(-report.LiveWithin))
				if err != nil {
					return err
				}
				sending := len(live) > 0
				if asJSON {
					return f.IO.JSON(report.Accounts(accts, f.location(), sending))
				}
				return printAccounts(f.IO, accts, f.location(), sending)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

type accountSetOptions struct {
	Tier, PhoneNumberID, TokenEnv string
	Rate                          float64
	Every                         time.Duration
	Burst, DailyCap               int
	Disable, Enable, Reset        bool
}

func newAccountSetCmd(f *Factory) *cobra.Command {
	var o accountSetOptions
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Change an account's tier, limits or state",
		Long: `Change an account. Per-account --rate/--every, --burst and --daily-cap override
its tier; --reset-limits goes back to the tier's values. A running campaign
picks the change up within seconds.`,
		Example: `  wasend account set fresh-02 --tier warm
  wasend account set main-01 --every 3s --burst 20
  wasend account set main-01 --disable`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ch store.AccountChange
			fl := cmd.Flags()
			if fl.Changed("tier") {
				if !campaign.ValidTier(o.Tier) {
					return usagef("--tier %q: must be one of new, warm, active", o.Tier)
				}
				ch.Tier = &o.Tier
			}
			if fl.Changed("phone-number-id") {
				ch.PhoneNumberID = &o.PhoneNumberID
			}
			if fl.Changed("token-env") {
				ch.TokenEnv = &o.TokenEnv
			}
			rate, ok, err := rateFromFlags(cmd, o.Rate, o.Every)
			if err != nil {
				return err
			}
			if ok {
				ch.Rate = &rate
			}
			if fl.Changed("burst") {
				if o.Burst < 1 {
					return usagef("--burst %d: must be at least 1", o.Burst)
				}
				ch.Burst = &o.Burst
			}
			if fl.Changed("daily-cap") {
				if o.DailyCap < 0 {
					return usagef("--daily-cap %d: must not be negative", o.DailyCap)
				}
				ch.DailyCap = &o.DailyCap
			}
			if o.Reset {
				zero, none, noCap := 0.0, 0, -1
				ch.Rate, ch.Burst, ch.DailyCap = &zero, &none, &noCap
			}
			if o.Disable && o.Enable {
				return usagef("--disable and --enable exclude each other")
			}
			if o.Disable || o.Enable {
				ch.Disabled = &o.Disable
			}
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				a, err := st.UpdateAccount(cmd.Context(), args[0], ch)
				if err != nil {
					return err
				}
				state := "enabled"
				if a.Disabled {
					state = "disabled"
				}
				f.IO.Infof("account %s: tier %s, rate %s, burst %d, daily cap %d, %s",
					a.Name, a.Tier, formatRate(a.Limits.Rate), a.Limits.Burst, a.Limits.DailyCap, state)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Tier, "tier", "", "new, warm or active")
	fl.StringVar(&o.PhoneNumberID, "phone-number-id", "", "the number's Cloud API phone number ID")
	fl.StringVar(&o.TokenEnv, "token-env", "", "environment variable holding the access token")
	fl.Float64Var(&o.Rate, "rate", 0, "messages per second (overrides the tier)")
	fl.DurationVar(&o.Every, "every", 0, "one message per this interval (overrides the tier)")
	fl.IntVar(&o.Burst, "burst", 0, "bucket size (overrides the tier)")
	fl.IntVar(&o.DailyCap, "daily-cap", 0, "messages per quota day (overrides the tier)")
	fl.BoolVar(&o.Reset, "reset-limits", false, "drop the overrides: follow the tier again")
	fl.BoolVar(&o.Disable, "disable", false, "stop sending from this account")
	fl.BoolVar(&o.Enable, "enable", false, "send from this account again")
	return cmd
}

// rateFromFlags reads --rate or --every; ok is false when neither was given.
func rateFromFlags(cmd *cobra.Command, rate float64, every time.Duration) (float64, bool, error) {
	fl := cmd.Flags()
	switch {
	case fl.Changed("rate") && fl.Changed("every"):
		return 0, false, usagef("--rate and --every exclude each other")
	case fl.Changed("rate"):
		if !(rate > 0) || math.IsInf(rate, 0) {
			return 0, false, usagef("--rate %v: must be a positive number of messages per second", rate)
		}
		return rate, true, nil
	case fl.Changed("every"):
		if every <= 0 {
			return 0, false, usagef("--every %v: must be a positive duration such as 12s", every)
		}
		return 1 / every.Seconds(), true, nil
	}
	return 0, false, nil
}

// formatRate shows a rate as people read it: "3.2/s", "1 every 12 s",
// "12/min".
func formatRate(r float64) string { return ui.FormatRate(r) }

// printAccounts prints the account table; sending says whether a campaign
// is being sent now (an account waits for a token only then). On a narrow
// terminal the token variable, phone number id, last error and configured
// rate columns go first.
func printAccounts(io *ui.IOStreams, accts []campaign.AccountStatus, loc *time.Location, sending bool) error {
	t := ui.NewTable(io, "NAME", "TIER", "RATE", "EFFECTIVE", "BURST", "TOKENS", "TODAY", "STATE", "LAST ERROR", "PHONE NUMBER ID", "TOKEN ENV").
		Truncate("NAME", "TOKEN ENV", "STATE").
		Optional("TOKEN ENV", "PHONE NUMBER ID", "RATE", "LAST ERROR", "BURST")
	for _, a := range accts {
		lastErr := ""
		if a.LastErrorCode != 0 {
			lastErr = strconv.Itoa(a.LastErrorCode)
		}
		t.Row(a.Name, a.Tier, formatRate(a.Limits.Rate), formatRate(report.EffectiveRate(a)), strconv.Itoa(a.Limits.Burst),
			strconv.FormatFloat(math.Floor(a.Tokens*10)/10, 'f', 1, 64),
			fmt.Sprintf("%d/%d", a.UsedToday, a.Limits.DailyCap), report.AccountState(a, loc, sending), lastErr, a.PhoneNumberID, "$"+a.TokenEnv)
	}
	if len(accts) == 0 {
		io.Infof("no accounts yet: add one with `wasend account add NAME --phone-number-id ID`")
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, a := range accts {
		if a.Restriction != "" && a.CooldownUntil.After(a.At) {
			io.Warnf("account %s is RESTRICTED until %s: %s", a.Name, a.CooldownUntil.In(loc).Format(time.DateTime), a.Restriction)
		}
	}
	warnSharedNumbers(io, accts)
	return nil
}

// warnSharedNumbers warns about accounts that send from one phone-number
// id: possible only in a database from before wasend refused it, and each
// gets a bucket of its own, so the number goes at twice its rate.
func warnSharedNumbers(io *ui.IOStreams, accts []campaign.AccountStatus) {
	var numbers []string
	names := map[string][]string{}
	for _, a := range accts {
		if len(names[a.PhoneNumberID]) == 0 {
			numbers = append(numbers, a.PhoneNumberID)
		}
		names[a.PhoneNumberID] = append(names[a.PhoneNumberID], a.Name)
	}
	for _, n := range numbers {
		if sharing := names[n]; len(sharing) > 1 {
			io.Warnf("accounts %s all send from phone number id %s: together they go at %d× its rate; remove all but one (`wasend account remove %s`)",
				strings.Join(sharing, ", "), n, len(sharing), sharing[len(sharing)-1])
		}
	}
}

func newTable(f *Factory, header ...string) *ui.Table { return ui.NewTable(f.IO, header...) }
