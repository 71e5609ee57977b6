package cmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
)

type planOptions struct {
	runOptions
	Accounts []string
	Start    string
	JSON     bool
}

func newCampaignPlanCmd(f *Factory) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT)",
		Short: "Forecast when a campaign would finish, without storing or sending anything",
		Long: `Count the recipients FILE.csv would give (read exactly as ` + "`campaign run`" + ` reads
it), then simulate sending them with the accounts, tiers and limits in the
database — each account's token bucket and daily cap, the global limit, quota
resets at each midnight of the zone of quota days — and print when the last
message would go, how many quota days that takes, each account's share, and
how much sooner it would finish with one more account of each tier.

Nothing is stored and nothing is sent. The forecast assumes every request
succeeds and cron runs ` + "`wasend quota reset`" + ` at midnight.`,
		Example: `  wasend campaign plan promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign plan promo.csv --text "Hi {{name}}" \
      --start 2026-12-01T08:00:00+01:00 --accounts main-01,main-02`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return campaignPlan(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	addMessageFlags(fl, &o.runOptions)
	addReadFlags(fl, &o.runOptions)
	addScheduleFlags(fl, &o.scheduleOptions)
	acceptSendFlags(f, cmd)
	fl.StringSliceVar(&o.Accounts, "accounts", nil, "plan with only these accounts (default: every enabled one)")
	fl.StringVar(&o.Start, "start", "now", "when sending starts: RFC 3339 (2026-12-01T08:00:00+01:00) or now")
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

// planJSON is the shape of `wasend campaign plan --json`.
type planJSON struct {
	File        string         `json:"file"`
	Recipients  int            `json:"recipients"`
	Skipped     int            `json:"skipped"`
	Start       time.Time      `json:"start"`
	Finish      *time.Time     `json:"finish"` // null: never
	Seconds     float64        `json:"duration_seconds"`
	QuotaResets int            `json:"quota_resets"`
	Never       string         `json:"never,omitempty"` // why it would never finish
	Accounts    []planShare    `json:"accounts"`
	GlobalLimit *report.Global `json:"global_limit"`
	OneMore     []planOneMore  `json:"one_more"`
	// Reach lists the portfolios whose messaging limit the plan counts.
	Reach []planReach `json:"messaging_limits,omitempty"`
	// With --send-window: the window, and the forecast without it (how
	// much the window stretches the campaign).
	SendWindow    string      `json:"send_window,omitempty"`
	WithoutWindow *planFinish `json:"without_window,omitempty"`
}

type planReach struct {
	Name     string   `json:"portfolio"`
	Allowed  int      `json:"distinct_recipients_24h"`
	Accounts []string `json:"accounts"`
}

type planFinish struct {
	Finish  *time.Time `json:"finish"` // null: never
	Seconds float64    `json:"duration_seconds"`
}

type planShare struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
	Sent int    `json:"sent"`
}

type planOneMore struct {
	Tier          string     `json:"tier"`
	Finish        *time.Time `json:"finish"`
	Seconds       float64    `json:"duration_seconds"`
	SoonerSeconds float64    `json:"sooner_seconds"` // 0 when the base plan never finishes
}

func campaignPlan(ctx context.Context, f *Factory, o planOptions) error {
	spec, err := o.spec(f.Sandbox)
	if err != nil {
		return err
	}
	ro, err := o.readOptions(f)
	if err != nil {
		return err
	}
	now := f.Now()
	start, err := parseStart(o.Start, now)
	if err != nil {
		return err
	}
	sched, err := o.schedule(f)
	if err != nil {
		return err
	}
	if !sched.StartAt.IsZero() {
		if o.Start != "now" {
			return usagef("--at and --start say the same: give one")
		}
		start = sched.StartAt
	}
	ro.Schedule = sched
	return f.withStore(ctx, func(st *store.Store) error {
		if err := runner.CheckTemplate(ctx, st, f.IO, spec); err != nil {
			return err
		}
		loc := st.Location() // quota days start at its midnights
		file, err := recipients.OpenFile("recipient", o.File)
		if err != nil {
			return err
		}
		defer file.Close()
		sum, err := checkFile(ctx, f, st, file, o.File, spec, ro, o.Report, 0)
		if err != nil {
			return err
		}

		in, err := planInput(ctx, f, st, o.Accounts, now, start, loc)
		if err != nil {
			return err
		}
		in.Messages = sum.Valid
		var plain planner.Forecast
		if w := sched.Window; w != nil {
			if plain, err = planner.Plan(in); err != nil {
				return fmt.Errorf("forecast without the send window: %w", err)
			}
			in.Window = w
			for zones, n := range sum.Zones {
				locs, err := campaign.LoadZones(zones)
				if err != nil {
					return err
				}
				in.Groups = append(in.Groups, planner.Group{Zones: locs, Messages: n})
			}
			// Map order must not change a forecast: groups open at once
			// share the tokens in this order.
			slices.SortFunc(in.Groups, func(a, b planner.Group) int { return strings.Compare(zoneKey(a), zoneKey(b)) })
		}
		base, err := planner.Plan(in)
		if err != nil {
			return fmt.Errorf("forecast: %w", err)
		}
		tiers, err := st.Tiers(ctx)
		if err != nil {
			return err
		}
		out := planJSON{File: o.File, Recipients: sum.Valid, Skipped: sum.Rows - sum.Valid, Start: start,
			Seconds: base.Duration.Seconds(), QuotaResets: base.QuotaResets, Never: base.Reason, Accounts: []planShare{}, OneMore: []planOneMore{}}
		if !base.Capped {
			out.Finish = &base.Finish
		}
		for _, p := range in.Portfolios {
			out.Reach = append(out.Reach, planReach{Name: p.Name, Allowed: p.Reach.Allowed(), Accounts: p.Accounts})
		}
		if w := sched.Window; w != nil {
			out.SendWindow = w.String()
			out.WithoutWindow = &planFinish{Seconds: plain.Duration.Seconds()}
			if !plain.Capped {
				out.WithoutWindow.Finish = &plain.Finish
			}
		}
		for _, s := range base.PerAccount {
			out.Accounts = append(out.Accounts, planShare{s.Name, s.Tier, s.Sent})
		}
		if in.Global != nil {
			out.GlobalLimit = &report.Global{Rate: in.GlobalLimit.Rate, Burst: in.GlobalLimit.Burst, Tokens: in.Global.TokensAt(in.GlobalLimit, start)}
		}
		for _, t := range tiers {
			more, err := planner.Plan(planner.WithExtra(in, t.Name, t.Limits))
			if err != nil {
				return fmt.Errorf("forecast with one more %s account: %w", t.Name, err)
			}
			m := planOneMore{Tier: t.Name, Seconds: more.Duration.Seconds()}
			if !more.Capped {
				m.Finish = &more.Finish
				if !base.Capped {
					m.SoonerSeconds = (base.Duration - more.Duration).Seconds()
				}
			}
			out.OneMore = append(out.OneMore, m)
		}
		if o.JSON {
			return f.IO.JSON(out)
		}
		return printPlan(f, out, loc)
	})
}

func zoneKey(g planner.Group) string {
	names := make([]string, len(g.Zones))
	for i, z := range g.Zones {
		names[i] = z.String()
	}
	return strings.Join(names, ",")
}

// parseStart reads --start: RFC 3339, or "now".
func parseStart(s string, now time.Time) (time.Time, error) {
	if s == "" || strings.EqualFold(s, "now") {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--start %q: want RFC 3339 (2026-12-01T08:00:00+01:00) or now", s)
	}
	return t, nil
}

// planInput reads the accounts and global limit the forecast starts from:
// every enabled account, or those named. A start on a later quota day
// than now finds the daily counts reset.
func planInput(ctx context.Context, f *Factory, st *store.Store, names []string, now, start time.Time, loc *time.Location) (planner.Input, error) {
	in := planner.Input{Start: start, Location: loc}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return in, err
	}
	for _, n := range names {
		if !slices.ContainsFunc(accts, func(a campaign.AccountStatus) bool { return a.Name == n }) {
			return in, fmt.Errorf("account %q: %w (see `wasend account list`)", n, campaign.ErrNotFound)
		}
	}
	newDay := start.In(loc).Format(time.DateOnly) > now.In(loc).Format(time.DateOnly)
	for _, a := range accts {
		if len(names) > 0 && !slices.Contains(names, a.Name) {
			continue
		}
		if a.Disabled {
			if len(names) > 0 {
				f.IO.Warnf("account %s is disabled: left out of the plan", a.Name)
			}
			continue
		}
		s := planner.FromStatus(a)
		if newDay {
			s.Used = 0
		}
		in.Accounts = append(in.Accounts, s)
	}
	gl, tokens, on, err := st.GlobalLimit(ctx)
	if err != nil {
		return in, err
	}
	if on {
		in.Global, in.GlobalLimit = &ratelimit.Bucket{Tokens: tokens, At: now}, gl
	}
	in.Portfolios, err = reachStates(ctx, st)
	return in, err
}

func printPlan(f *Factory, p planJSON, loc *time.Location) error {
	tty := f.IO.IsStdoutTTY()
	w := f.IO.Out
	fmt.Fprintf(w, "recipients: %d (%d rows skipped)\n", p.Recipients, p.Skipped)
	fmt.Fprintf(w, "start: %s\n", p.Start.In(loc).Format("2006-01-02 15:04:05 MST"))
	if p.Finish == nil {
		fmt.Fprintf(w, "finish: never: %s\n", p.Never)
	} else {
		fmt.Fprintf(w, "finish: %s, %s\n", p.Finish.In(loc).Format("2006-01-02 15:04:05 MST"),
			humanDuration(time.Duration(p.Seconds*float64(time.Second))))
		fmt.Fprintf(w, "quota resets needed: %d\n", p.QuotaResets)
	}
	for _, r := range p.Reach {
		fmt.Fprintf(w, "messaging limit: portfolio %s, %d distinct recipients in any 24 h (%s)\n", r.Name, r.Allowed, strings.Join(r.Accounts, ", "))
	}
	if p.SendWindow != "" && p.WithoutWindow != nil {
		without := "never"
		if ww := p.WithoutWindow; ww.Finish != nil {
			without = ww.Finish.In(loc).Format("2006-01-02 15:04:05 MST") + ", " +
				humanDuration(time.Duration(ww.Seconds*float64(time.Second)))
			if p.Finish != nil {
				without += "; the window adds " + humanDuration(time.Duration((p.Seconds-ww.Seconds)*float64(time.Second)))
			}
		}
		fmt.Fprintf(w, "send window: %s in each recipient's time zone (without it: %s)\n", p.SendWindow, without)
	}
	if tty {
		fmt.Fprintln(w, "\nShare of each account")
	}
	t := newTable(f, "ACCOUNT", "TIER", "MESSAGES", "SHARE")
	for _, a := range p.Accounts {
		share := "0%"
		if p.Recipients > 0 {
			share = strconv.FormatFloat(100*float64(a.Sent)/float64(p.Recipients), 'f', 1, 64) + "%"
		}
		t.Row(a.Name, a.Tier, strconv.Itoa(a.Sent), share)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if tty {
		fmt.Fprintln(w, "\nWith one more account of a tier")
	}
	t = newTable(f, "TIER", "FINISH", "SOONER")
	for _, m := range p.OneMore {
		finish, sooner := "never", "-"
		if m.Finish != nil {
			finish = m.Finish.In(loc).Format("2006-01-02 15:04:05 MST")
			sooner = humanDuration(time.Duration(m.SoonerSeconds * float64(time.Second)))
			if p.Finish == nil {
				sooner = "finishes at all"
			}
		}
		t.Row(m.Tier, finish, sooner)
	}
	return t.Render()
}

// humanDuration rounds a forecast for people: "about 2 d 4 h".
var humanDuration = report.HumanDuration
