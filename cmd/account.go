package cmd

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
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
	cmd.AddCommand(newAccountSyncCmd(f), newAccountAddCmd(f), newAccountListCmd(f), newAccountSetCmd(f), newAccountRemoveCmd(f), newAccountTestCmd(f),
		newAccountHistoryCmd(f))
	return cmd
}

type accountAddOptions struct {
	Name, PhoneNumberID, Tier, TokenEnv, Portfolio, Throughput, WABA string
	AutoTier                                                         bool
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
stored. The account's bucket starts full and its quota day starts today.

With --auto-tier (the default) the number earns its tier: see
` + "`wasend account set --auto-tier`" + ` and ` + "`wasend account history`" + `.`,
		Example: `  wasend account add main-01 --phone-number-id 1234567890 --tier active \
      --token-env WA_TOKEN_MAIN
  wasend account add fresh-02 --phone-number-id 2345678901 --tier new \
      --token-env WA_TOKEN_FRESH`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if o.PhoneNumberID == "" {
				return usagef("--phone-number-id is required")
			}
			if err := campaign.ValidatePhoneNumberID(o.PhoneNumberID); err != nil {
				return usagef("--phone-number-id: %v", err)
			}
			if !campaign.ValidTier(o.Tier) {
				return usagef("--tier %q: must be one of new, warm, active", o.Tier)
			}
			var tp float64
			if cmd.Flags().Changed("throughput") {
				var err error
				if tp, err = parseThroughput(o.Throughput); err != nil {
					return err
				}
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				a, err := st.AddAccount(cmd.Context(), campaign.Account{
					Name: o.Name, PhoneNumberID: o.PhoneNumberID, Tier: o.Tier, TokenEnv: o.TokenEnv, Portfolio: o.Portfolio,
					WABA: o.WABA, ThroughputPinned: tp, ManualTier: !o.AutoTier,
				})
				if err != nil {
					return err
				}
				warnThroughput(f, a.Name, tp, 0)
				f.IO.Infof("added account %s (tier %s, token from $%s)", a.Name, a.Tier, a.TokenEnv)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&o.PhoneNumberID, "phone-number-id", "", "the number's Cloud API phone number ID")
	cmd.Flags().StringVar(&o.Tier, "tier", campaign.TierNew, "new, warm or active")
	cmd.Flags().StringVar(&o.TokenEnv, "token-env", "WASEND_TOKEN", "environment variable holding the access token")
	cmd.Flags().StringVar(&o.Portfolio, "portfolio", "", "the business portfolio whose messaging limit the number shares (default: one of its own)")
	cmd.Flags().StringVar(&o.Throughput, "throughput", "", throughputUsage)
	cmd.Flags().StringVar(&o.WABA, "waba-id", "", "the `ID` of the WhatsApp Business Account the number belongs to (template sync and the template check use it)")
	cmd.Flags().BoolVar(&o.AutoTier, "auto-tier", true, "promote and demote the number between tiers by its record (--auto-tier=false keeps the tier by hand)")
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
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				accts, err := st.Accounts(cmd.Context())
				if err != nil {
					return err
				}
				live, err := readmodel.New(st).LiveRunners(cmd.Context(), runner.Liveness(report.LiveWithin), f.Now())
				if err != nil {
					return err
				}
				sending := len(live) > 0
				shared := f.readSharedTokens(cmd.Context(), st)
				mm, err := readmodel.New(st).MarketingStatuses(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					shared.apply(accts)
					out := report.Accounts(accts, f.location(), sending)
					for i := range out {
						_, ok := shared.Tokens[out[i].Name]
						out[i].TokensShared = ok
						if out[i].WABA != "" {
							out[i].MarketingMessages = mm[out[i].WABA]
						}
					}
					return f.IO.JSON(out)
				}
				return printAccounts(f.IO, accts, f.location(), sending, dbHint(f), shared, mm)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

type accountSetOptions struct {
	Tier, PhoneNumberID, TokenEnv, Portfolio, Throughput, WABA, API string
	Rate                                                            float64
	Every                                                           time.Duration
	Burst, DailyCap                                                 int
	Disable, Enable, Reset                                          bool
	AutoTier                                                        bool
	PromoteAfter                                                    time.Duration
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
			var ch campaign.AccountChange
			fl := cmd.Flags()
			if fl.Changed("tier") {
				if !campaign.ValidTier(o.Tier) {
					return usagef("--tier %q: must be one of new, warm, active", o.Tier)
				}
				ch.Tier = &o.Tier
			}
			if fl.Changed("phone-number-id") {
				if err := campaign.ValidatePhoneNumberID(o.PhoneNumberID); err != nil {
					return usagef("--phone-number-id: %v", err)
				}
				ch.PhoneNumberID = &o.PhoneNumberID
			}
			if fl.Changed("token-env") {
				ch.TokenEnv = &o.TokenEnv
			}
			if fl.Changed("portfolio") {
				ch.Portfolio = &o.Portfolio
			}
			if fl.Changed("waba-id") {
				ch.WABA = &o.WABA
			}
			if fl.Changed("api") {
				api, err := campaign.ParseAPI(o.API)
				if err != nil {
					return usageError{err}
				}
				ch.API = &api
			}
			if fl.Changed("throughput") {
				tp, err := parseThroughput(o.Throughput)
				if err != nil {
					return err
				}
				ch.Throughput = &tp
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
			var (
				auto  *bool
				after *time.Duration
			)
			if fl.Changed("auto-tier") {
				auto = &o.AutoTier
			}
			if fl.Changed("promote-after") {
				if o.PromoteAfter <= 0 {
					return usagef("--promote-after %v: must be more than zero", o.PromoteAfter)
				}
				after = &o.PromoteAfter
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				if auto != nil || after != nil {
					if err := st.SetAutoTier(cmd.Context(), args[0], auto, after); err != nil {
						return err
					}
				}
				a, err := st.UpdateAccount(cmd.Context(), args[0], ch)
				if err != nil {
					return err
				}
				state := "enabled"
				if a.Disabled {
					state = "disabled"
				}
				if a.API != "" {
					state += ", --api " + string(a.API) + " when a run gives none"
				}
				f.IO.Infof("account %s: tier %s, rate %s, burst %d, daily cap %d, %s",
					a.Name, a.Tier, formatRate(a.Limits.Rate), a.Limits.Burst, a.Limits.DailyCap, state)
				if ch.Throughput != nil {
					warnThroughput(f, a.Name, *ch.Throughput, a.ThroughputRead)
				}
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
	fl.StringVar(&o.Portfolio, "portfolio", "", `the business portfolio the number belongs to ("" for one of its own)`)
	fl.StringVar(&o.Throughput, "throughput", "", throughputUsage+"; 0 follows Meta again")
	fl.StringVar(&o.WABA, "waba-id", "", `the `+"`ID`"+` of the WhatsApp Business Account the number belongs to ("" forgets it)`)
	fl.StringVar(&o.API, "api", "", "the endpoint for runs that give no --api: cloud, marketing or auto (campaign run --api)")
	fl.BoolVar(&o.AutoTier, "auto-tier", true, "promote new → warm → active by the number's record, demote on trouble (=false: keep the tier by hand)")
	fl.DurationVar(&o.PromoteAfter, "promote-after", 0, "with --auto-tier: time in a tier before a promotion (default 168h)")
	return cmd
}

func newAccountHistoryCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "history NAME",
		Short: "List an account's tier changes and its way to the next tier",
		Long: `List every change of account NAME's tier — when it was added, promoted or
demoted by warm-up, or set by hand — with the reason, oldest first; then, for
an account with auto-tier on, what it still needs for the next tier.`,
		Example: `  wasend account history fresh-02`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				reads := readmodel.New(st)
				h, err := reads.TierHistory(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				loc := f.location()
				t := newTable(f, "AT", "FROM", "TO", "REASON")
				for _, c := range h {
					from := c.From
					if from == "" {
						from = "-"
					}
					t.Row(c.At.In(loc).Format("2006-01-02 15:04:05 MST"), from, c.To, c.Reason)
				}
				if err := t.Render(); err != nil {
					return err
				}
				progress, err := reads.TierProgress(cmd.Context())
				if err != nil {
					return err
				}
				if p, ok := progress[args[0]]; ok {
					f.IO.Infof("%s", tierProgressText(p))
				} else {
					f.IO.Infof("auto-tier is off: the tier is kept by hand")
				}
				return nil
			})
		},
	}
}

// tierProgressText says how far an account is on its way to the next tier.
func tierProgressText(p campaign.TierProgress) string {
	switch {
	case p.Next == "":
		return "auto-tier: " + p.Tier + " is the top tier"
	case p.Ready:
		return "auto-tier: ready for " + p.Next + " at the next quota reset"
	}
	return "auto-tier: to " + p.Next + ": " + p.Why
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

const throughputUsage = "the number's throughput in messages/s, or unlimited: overrides what Meta said (default 80, 1000 once upgraded)"

// parseThroughput reads --throughput: a number of messages per second (0
// unpins), or unlimited.
func parseThroughput(s string) (float64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "unlimited") {
		return campaign.Unlimited, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, usagef("--throughput %q: want messages per second (such as 80 or 1000) or unlimited", s)
	}
	return v, nil
}

// warnThroughput warns when a pinned throughput is above what Meta said
// (read; 0: never read, the default then).
func warnThroughput(f *Factory, name string, pinned, read float64) {
	meta, said := read, "Meta said at the last `wasend account sync`"
	if meta <= 0 {
		meta, said = campaign.DefaultThroughput, "Meta gives a number until it is upgraded (not synced yet)"
	}
	if pinned == campaign.Unlimited || pinned > meta {
		f.IO.Warnf("account %s: throughput %s is above the %s msg/s %s; requests beyond Meta's figure fail with 130429",
			name, formatThroughput(pinned), strconv.FormatFloat(meta, 'f', -1, 64), said)
	}
}

func formatThroughput(v float64) string {
	switch {
	case v == campaign.Unlimited || v == 0:
		return "unlimited"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "/s"
}

// formatRate shows a rate as people read it: "3.2/s", "1 every 12 s",
// "12/min".
func formatRate(r float64) string { return ui.FormatRate(r) }

// printAccounts prints the account table; sending says whether a campaign
// is being sent now (an account waits for a token only then). On a narrow
// terminal the token variable, phone number id, last error and configured
// rate columns go first.
// printAccounts prints the accounts table. Under --limits (shared.On) its
// tokens are Redis's, headed SHARED TOKENS, "-" where Redis gave none.
//
// The API column (each account's --api and its WABA's onboarding to the
// Marketing Messages API) shows only when an account has an --api of its
// own or a WABA's onboarding was read: without them every send is cloud.
func printAccounts(io *ui.IOStreams, accts []campaign.AccountStatus, loc *time.Location, sending bool, flags string, shared sharedTokens, mm map[string]string) error {
	tokensHeader := "TOKENS"
	if shared.On {
		tokensHeader = "SHARED TOKENS"
	}
	headers := []string{"NAME", "TIER", "RATE", "EFFECTIVE", "BURST", tokensHeader, "TODAY", "STATE", "LAST ERROR", "PHONE NUMBER ID", "TOKEN ENV"}
	withAPI := slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.API != "" || mm[a.WABA] != "" })
	if withAPI {
		headers = append(headers, "API")
	}
	t := ui.NewTable(io, headers...).
		Kind("account").Truncate("NAME", "TOKEN ENV", "STATE").
		Optional("TOKEN ENV", "PHONE NUMBER ID", "RATE", "LAST ERROR", "BURST")
	shared.apply(accts)
	for _, a := range accts {
		lastErr := ""
		if code := report.LastErrorCode(a); code != 0 {
			lastErr = strconv.Itoa(code)
		}
		tokens := strconv.FormatFloat(math.Floor(a.Tokens*10)/10, 'f', 1, 64)
		if _, ok := shared.Tokens[a.Name]; shared.On && !ok {
			tokens = "-"
		}
		cells := []string{a.Name, a.Tier, formatRate(a.Limits.Rate), formatRate(report.EffectiveRate(a)), strconv.Itoa(a.Limits.Burst),
			tokens,
			fmt.Sprintf("%d/%d", a.UsedToday, a.Limits.DailyCap), report.AccountState(a, loc, sending), lastErr, a.PhoneNumberID, "$" + a.TokenEnv}
		if withAPI {
			cells = append(cells, apiCell(a.API, mm[a.WABA]))
		}
		t.Row(cells...)
	}
	if len(accts) == 0 {
		io.Infof("no accounts yet: add one with wasend account add, giving it a name and its phone number id (--phone-number-id)")
	}
	if err := t.Render(); err != nil {
		return err
	}
	if shared.On && shared.Why != "" {
		io.Warnf("the accounts' tokens are shared between hosts through Redis (--limits), and some are not shown: %s", shared.Why)
	}
	for _, a := range accts {
		if a.Check.Failed() && !a.Disabled {
			io.Warnf("account %s failed its check at %s: %s; runs leave it out until a check passes (`wasend account test %s%s`)",
				a.Name, a.Check.At.In(loc).Format(time.DateTime), oneLine(a.Check.Error), a.Name, flags)
		}
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

// apiCell is the account list's API column: the account's --api (cloud
// when it has none) and its WABA's onboarding to the Marketing Messages
// API, as last synced.
func apiCell(api campaign.API, onboarding string) string {
	if api == "" {
		api = campaign.APICloud
	}
	if onboarding == "" {
		onboarding = "not read"
	}
	return string(api) + ", MM " + strings.ToLower(strings.ReplaceAll(onboarding, "_", " "))
}
