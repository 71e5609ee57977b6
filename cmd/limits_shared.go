package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store/driver"
)

// shareLimits makes st's claims ask the limits shared through Redis when
// --limits (or WASEND_LIMITS) names one. Nothing is connected yet: a Redis
// that is down makes sending wait, not the command fail.
func (f *Factory) shareLimits(ctx context.Context, st driver.Driver) error {
	url := f.LimitsURL()
	if url == "" {
		return nil
	}
	if err := hostshare.CheckURL(url); err != nil {
		return usageError{err}
	}
	return hostshare.ShareLimits(ctx, st, url)
}

// answeringLimits is the shared limits of a command that only works on
// them: --limits is required, and asked first, so a wrong URL or password
// is an error even where there is no account to read.
func (f *Factory) answeringLimits(ctx context.Context) (*hostshare.Limits, error) {
	lim, err := f.sharedLimits()
	if err != nil {
		return nil, err
	}
	if lim == nil {
		return nil, usagef("no shared limits: give --limits redis://HOST:6379/0 (or set WASEND_LIMITS)")
	}
	if err := lim.Ping(ctx); err != nil {
		lim.Close()
		return nil, err
	}
	return lim, nil
}

// sharedLimits dials the shared limits for a command that reads or changes
// them itself (quota reset, limits status); nil without --limits.
func (f *Factory) sharedLimits() (*hostshare.Limits, error) {
	url := f.LimitsURL()
	if url == "" {
		return nil, nil
	}
	lim, err := hostshare.OpenLimits(url)
	if err != nil {
		return nil, usageError{err}
	}
	return lim, nil
}

// sharedTokens is what the accounts' TOKENS mean under --limits: the
// buckets in Redis every host's claims take from (this database's own are
// not used then). On is false without --limits; an account missing from
// Tokens has no figure, and Why says why (Redis did not answer, or holds
// no state for its portfolio).
type sharedTokens struct {
	On     bool
	Tokens map[string]float64
	Why    string
}

// readSharedTokens reads the shared buckets for status and account list,
// waiting at most a few seconds for Redis: a Redis that is down leaves the
// figures out, never the command failed.
func (f *Factory) readSharedTokens(ctx context.Context, st driver.Driver) sharedTokens {
	lim, err := f.sharedLimits()
	if lim == nil || err != nil {
		return sharedTokens{On: err != nil, Why: fmt.Sprint(err)}
	}
	defer lim.Close()
	out := sharedTokens{On: true, Tokens: map[string]float64{}}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	states, err := lim.State(ctx, st)
	if err != nil {
		out.Why = fmt.Sprintf("Redis at %s did not answer: %v", lim, err)
		return out
	}
	for _, p := range states {
		if p.State.Generation == "" {
			out.Why = fmt.Sprintf("Redis at %s holds no state for portfolio %s (see `wasend limits status%s`)", lim, p.Portfolio, dbHint(f))
			continue
		}
		for i, a := range p.Accounts {
			out.Tokens[a.Name] = p.State.Accounts[i].Tokens
		}
	}
	return out
}

// apply puts the shared tokens in place of the local ones, so that tokens
// and the state that reads them ("waiting") say what claims will find.
func (s sharedTokens) apply(accts []campaign.AccountStatus) {
	for i, a := range accts {
		if v, ok := s.Tokens[a.Name]; ok {
			accts[i].Tokens = v
		}
	}
}

// sharedSource is a report's source whose accounts carry the shared
// tokens.
type sharedSource struct {
	report.Source
	shared sharedTokens
}

func (s sharedSource) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	accts, err := s.Source.Accounts(ctx)
	s.shared.apply(accts)
	return accts, err
}

// limitsWaitText says why a campaign's host claims nothing while it waits
// for the shared limits, and what ends the wait.
// Its commands end with the reader's flags; limitsSet says whether the
// reader gave a limits URL (--limits or WASEND_LIMITS).
func limitsWaitText(lost bool, since, why, flags string, limitsSet bool) string {
	if lost {
		if !strings.Contains(why, "quota reset --force") {
			// A note from an older wasend: no portfolio, no command.
			why = "Redis holds no state (restarted without persistence?); nothing is sent until `wasend quota reset --force --limits URL` rebuilds the day from this host's count (`wasend limits status" + flags + "` says for which accounts)"
		}
		return fmt.Sprintf("waiting for shared limits since %s: %s", since, hint.Fill(why, flags, limitsSet))
	}
	return fmt.Sprintf("waiting for shared limits since %s: Redis does not answer (%s); those accounts claim nothing until it does, then sending resumes by itself", since, why)
}

// resetSharedQuota starts the quota day in the shared limits too, when
// --limits names them, and prints what it did. It returns the accounts
// whose lost day a forced reset rebuilt from this host's count instead:
// their own count is kept.
func resetSharedQuota(ctx context.Context, f *Factory, st driver.Driver, accounts []string, force bool) (map[string]bool, error) {
	lim, err := f.sharedLimits()
	if lim == nil || err != nil {
		return nil, err
	}
	defer lim.Close()
	if err := lim.Ping(ctx); err != nil {
		return nil, err
	}
	res, err := lim.ResetQuota(ctx, st, accounts, force)
	rebuilt := map[string]bool{}
	for _, r := range res {
		switch {
		case r.AlreadyAdded:
			rebuilt[r.Account] = true
			fmt.Fprintf(f.IO.Out, "%s: the shared quota day was rebuilt with this host's count before; unchanged\n", r.Account)
		case r.Rebuilt:
			rebuilt[r.Account] = true
			how := "rebuilt"
			if r.Started {
				how = "started (Redis had none)"
			}
			fmt.Fprintf(f.IO.Out, "%s: shared quota day %s %s from this host's count (%d), not from zero; "+
				"every other host adds its own before it sends again (one that will not return: `wasend limits add-lost-host`)\n", r.Account, r.Day, how, r.Added)
		case r.Reset.Reset && r.LastDay == "":
			fmt.Fprintf(f.IO.Out, "%s: shared quota day %s started (Redis had none)\n", r.Account, r.Day)
		case r.Reset.Reset:
			fmt.Fprintf(f.IO.Out, "%s: shared quota day %s (was %d on %s)\n", r.Account, r.Day, r.Before, r.LastDay)
		default:
			fmt.Fprintf(f.IO.Out, "%s: shared quota day %s already open, unchanged (%d); use --force to reset again\n", r.Account, r.Day, r.Before)
		}
	}
	var rerr *hostshare.ResetError
	if errors.As(err, &rerr) {
		// Every other portfolio has its new day; say what each failed one
		// needs, and fail only now.
		for _, p := range rerr.Failed {
			if errors.Is(p.Err, hostshare.ErrStateLost) && !force {
				f.IO.Warnf("portfolio %s: Redis holds no shared state (restarted without persistence?), so its accounts send nothing; "+
					"rebuild its day from this host's count with `wasend quota reset --force --account %s%s`", p.Portfolio, strings.Join(p.Accounts, ","), dbHint(f))
				continue
			}
			f.IO.Warnf("portfolio %s (%s): %v", p.Portfolio, strings.Join(p.Accounts, ","), p.Err)
		}
		return rebuilt, fmt.Errorf("shared limits at %s: quota reset failed in %d portfolio(s), done in the others: %w", lim, len(rerr.Failed), err)
	}
	if err != nil {
		return rebuilt, fmt.Errorf("shared limits at %s: %w", lim, err)
	}
	return rebuilt, nil
}

func newLimitsAddLostHostCmd(f *Factory) *cobra.Command {
	var (
		account, host string
		count         int
	)
	cmd := &cobra.Command{
		Use:   "add-lost-host --account NAME --host LABEL --count N",
		Short: "Add a lost host's count to a shared quota day rebuilt after Redis lost it",
		Long: `After Redis lost its data, ` + "`wasend quota reset --force`" + ` rebuilds the
shared quota day from each host's own count, and every host adds its part
before it sends again. A host that will not return (its database gone) cannot:
add what it sent today from the account's number by hand. LABEL names that
host: the same label added again adds nothing. Only a rebuilt day takes it
(exit 1 when Redis holds a day that was not lost).`,
		Example: `  wasend limits add-lost-host --account sales-01 --host old-box --count 480`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if account == "" || host == "" || count < 0 {
				return usagef("give --account, --host and a --count of 0 or more")
			}
			lim, err := f.answeringLimits(cmd.Context())
			if err != nil {
				return err
			}
			defer lim.Close()
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				added, already, err := lim.AddLostHost(cmd.Context(), st, account, host, count)
				if err != nil {
					return fmt.Errorf("shared limits at %s: %w", lim, err)
				}
				if already {
					fmt.Fprintf(f.IO.Out, "%s: host %s was added before; nothing added\n", account, host)
					return nil
				}
				fmt.Fprintf(f.IO.Out, "%s: %d added to the rebuilt shared quota day for host %s\n", account, added, host)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "the account whose number the lost host sent from")
	cmd.Flags().StringVar(&host, "host", "", "a label for the lost host (adding it again adds nothing)")
	cmd.Flags().IntVar(&count, "count", 0, "what the lost host sent from the number on the quota day")
	return cmd
}

func newLimitStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --limits URL",
		Short: "Show the limits shared between hosts through Redis",
		Long: `Show the limits this database's accounts share with other hosts through
Redis (--limits or WASEND_LIMITS): per account its portfolio, the current
shared quota day, the messages counted against its daily cap on that day by
every host, and its tokens now; then each portfolio's global bucket and its
reach (distinct recipients every host messaged in the last 24 h, of the limit
minus its margin). Accounts are known to Redis by their phone number id,
portfolios by name; accounts without a portfolio share the portfolio
"default". It spends nothing. A URL nobody answers at, or a wrong password
or database, is an error (exit 1); the password is never printed.`,
		Example: `  wasend limits status --limits redis://redis.internal:6379/0
  WASEND_LIMITS=redis://redis.internal:6379/0 wasend limits status --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lim, err := f.answeringLimits(cmd.Context())
			if err != nil {
				return err
			}
			defer lim.Close()
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				states, err := lim.State(cmd.Context(), st)
				if err != nil {
					return fmt.Errorf("shared limits at %s: %w", lim, err)
				}
				out := limitsStatusJSON(states)
				if len(out.Portfolios) == 0 {
					// Nothing to read in Redis for: say so, on stderr when
					// piped, so that stdout stays the (empty) records.
					say := f.IO.Infof
					if f.IO.IsStdoutTTY() {
						say = func(format string, a ...any) { fmt.Fprintf(f.IO.Out, format+"\n", a...) }
					}
					say("no accounts in database %s, so nothing to show of the limits shared at %s: "+
						"add the accounts this host sends from with wasend account add (a name, --phone-number-id and --token-env), "+
						"or give the --db that has them", st.Path(), lim)
				}
				if asJSON {
					return f.IO.JSON(out)
				}
				return printLimitsStatus(f, out)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

type limitsStatusOut struct {
	Portfolios []sharedPortfolioJSON `json:"portfolios"`
}

type sharedPortfolioJSON struct {
	Name string `json:"name"`
	// Lost: Redis holds no state for it (never started, or lost in a
	// restart without persistence).
	Lost     bool                `json:"lost"`
	At       time.Time           `json:"at"`
	Accounts []sharedAccountJSON `json:"accounts"`
	Global   *sharedBucketJSON   `json:"global,omitempty"`
	Reach    sharedReachJSON     `json:"reach"`
}

// sharedReachJSON is a portfolio's moving 24 h window in Redis: distinct
// recipients admitted by every host.
type sharedReachJSON struct {
	Used    int        `json:"used_24h"`
	Limit   int        `json:"limit"`   // 0: none enforced
	Allowed int        `json:"allowed"` // the limit minus its margin; 0 with no limit
	FreesAt *time.Time `json:"frees_at,omitempty"`
}

type sharedAccountJSON struct {
	Name     string  `json:"name"`
	Number   string  `json:"phone_number_id"`
	QuotaDay string  `json:"quota_day"`
	Used     int     `json:"used"`
	DailyCap int     `json:"daily_cap"`
	Tokens   float64 `json:"tokens"`
	Burst    int     `json:"burst"`
	Rate     float64 `json:"rate"`
}

type sharedBucketJSON struct {
	Tokens float64 `json:"tokens"`
	Burst  int     `json:"burst"`
	Rate   float64 `json:"rate"`
}

func limitsStatusJSON(states []hostshare.PortfolioState) limitsStatusOut {
	out := limitsStatusOut{Portfolios: []sharedPortfolioJSON{}}
	for _, s := range states {
		p := sharedPortfolioJSON{Name: s.Portfolio, Lost: s.State.Generation == "", At: s.State.At.UTC(), Accounts: []sharedAccountJSON{}}
		for i, a := range s.Accounts {
			as := s.State.Accounts[i]
			p.Accounts = append(p.Accounts, sharedAccountJSON{Name: a.Name, Number: a.Gate.Name, QuotaDay: as.Day, Used: as.Used,
				DailyCap: a.Gate.DailyCap, Tokens: as.Tokens, Burst: a.Gate.Limit.Burst, Rate: a.Gate.Limit.Rate})
		}
		p.Reach = sharedReachJSON{Used: s.State.Reach.Used, Limit: s.Reach.Limit}
		if s.Reach.Limited() {
			p.Reach.Allowed = s.Reach.Allowed()
		}
		if f := s.State.Reach.FreesAt(); !f.IsZero() {
			f = f.UTC()
			p.Reach.FreesAt = &f
		}
		if s.Global != nil && s.State.Global != nil {
			p.Global = &sharedBucketJSON{Tokens: s.State.Global.Tokens, Burst: s.Global.Burst, Rate: s.Global.Rate}
		}
		out.Portfolios = append(out.Portfolios, p)
	}
	return out
}

func printLimitsStatus(f *Factory, out limitsStatusOut) error {
	t := newTable(f, "ACCOUNT", "PORTFOLIO", "QUOTA DAY", "USED/CAP", "TOKENS/BURST", "RATE/S").Truncate("ACCOUNT", "PORTFOLIO")
	for _, p := range out.Portfolios {
		for _, a := range p.Accounts {
			day := a.QuotaDay
			if day == "" {
				day = "-"
			}
			used, tokens := fmt.Sprintf("%d/%d", a.Used, a.DailyCap), fmt.Sprintf("%.1f/%d", a.Tokens, a.Burst)
			if p.Lost { // Redis holds no figure: none is shown
				used, tokens = fmt.Sprintf("-/%d", a.DailyCap), fmt.Sprintf("-/%d", a.Burst)
			}
			t.Row(a.Name, p.Name, day, used, tokens, strconv.FormatFloat(a.Rate, 'g', 4, 64))
		}
		if p.Global != nil {
			t.Row("(global)", p.Name, "-", "-", fmt.Sprintf("%.1f/%d", p.Global.Tokens, p.Global.Burst), strconv.FormatFloat(p.Global.Rate, 'g', 4, 64))
		}
		if p.Reach.Limit > 0 {
			t.Row("(reach 24h)", p.Name, "-", fmt.Sprintf("%d/%d", p.Reach.Used, p.Reach.Allowed), "-", "-")
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	started := slices.ContainsFunc(out.Portfolios, func(p sharedPortfolioJSON) bool { return !p.Lost })
	for _, p := range out.Portfolios {
		if p.Lost {
			f.IO.Warnf("portfolio %s: Redis holds no shared state (never started, or lost in a restart without persistence); "+
				"nothing is sent until `%s` rebuilds its day from this host's count (each other host then adds its own)", p.Name, lostResetCommand(p, started, dbHint(f)))
		}
	}
	return nil
}

// lostResetCommand is the reset that rebuilds a portfolio Redis holds no
// state for. While other portfolios have theirs, it names this one's
// accounts: a forced reset of every account would zero the others' counts
// too, a second day of their caps.
func lostResetCommand(p sharedPortfolioJSON, othersStarted bool, flags string) string {
	cmd := "wasend quota reset --force"
	if othersStarted {
		for _, a := range p.Accounts {
			cmd += " --account " + a.Name
		}
	}
	return cmd + flags
}
