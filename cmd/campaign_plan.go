package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
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
succeeds and cron runs ` + "`wasend quota reset`" + ` at midnight. Piped, every line
is a record that names its kind (kind=recipients count=… first).`,
		Example: `  wasend campaign plan promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign plan promo.csv --text "Hi {{name}}" \
      --start 2026-12-01T08:00:00+01:00 --accounts main-01,main-02`,
		Args: fileOrFrom(&o.fromOptions),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			return campaignPlan(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	addMessageFlags(fl, &o.runOptions)
	addReadFlags(fl, &o.runOptions)
	addFromFlags(fl, &o.fromOptions)
	addScheduleFlags(fl, &o.scheduleOptions)
	addAPIFlag(fl, &o.runOptions)
	acceptSendFlags(f, cmd)
	fl.StringSliceVar(&o.Accounts, "accounts", nil, "plan with only these accounts (default: every enabled one)")
	fl.StringVar(&o.Start, "start", "now", "when sending starts: now, or a time as --at takes it (tomorrow 08:00, RFC 3339 2026-12-01T08:00:00+01:00)")
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

func campaignPlan(ctx context.Context, f *Factory, o planOptions) error {
	spec, sendAPI, ro, err := o.preview(f)
	if err != nil {
		return err
	}
	now := f.Now()
	start, err := parseStart(o.Start, now, f.location())
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
	return f.withStore(ctx, func(st driver.Driver) error {
		if err := runner.CheckTemplate(ctx, st, f.IO, spec); err != nil {
			return err
		}
		if _, err := runner.Endpoint(ctx, st, sendAPI, spec); err != nil {
			return err
		}
		if err := runner.CheckTTL(ctx, st, sendAPI, spec, o.TTL); err != nil {
			return err
		}
		sum, name, err := checkSource(ctx, f, st, o.runOptions, spec, ro, 0)
		if err != nil {
			return err
		}
		out, err := report.PlanCampaign(ctx, st, report.PlanOptions{File: name, Recipients: sum.Valid, Skipped: sum.Rows - sum.Valid,
			Zones: sum.Zones, Window: sched.Window, Accounts: o.Accounts, Now: now, Start: start, Warnf: f.IO.Warnf})
		if err != nil {
			return err
		}
		est := runner.FileEstimate(ctx, st, sum, spec, start)
		if o.JSON {
			return f.IO.JSON(struct {
				report.Plan
				phoneJSON
				Cost *report.CostDetail `json:"cost,omitempty"`
			}{out, phoneOf(sum), est})
		}
		if err := printPlan(f, out, sum, st.Location()); err != nil {
			return err
		}
		if f.IO.IsStdoutTTY() {
			if est != nil {
				fmt.Fprintln(f.IO.Out)
				printFileEstimate(f.IO.Out, est)
			}
			return nil
		}
		return printEstimateRecords(f, est)
	})
}

// parseStart reads --start: now, or a time as --at takes it.
func parseStart(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	t, err := campaign.ParseAt(s, now, loc)
	if err != nil {
		return time.Time{}, usagef("--start %v", err)
	}
	return t, nil
}

func printPlan(f *Factory, p report.Plan, file runner.Summary, loc *time.Location) error {
	tty := f.IO.IsStdoutTTY()
	w := f.IO.Out
	if !tty {
		return printPlanRecords(f, p, file, loc)
	}
	fmt.Fprintf(w, "recipients: %d (%d rows skipped)\n", p.Recipients, p.Skipped)
	printPhoneColumn(w, file)
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
	return printPlanTables(f, p, loc)
}

// printPlanTables prints each account's share and the what-ifs of one more
// account of a tier.
func printPlanTables(f *Factory, p report.Plan, loc *time.Location) error {
	tty := f.IO.IsStdoutTTY()
	w := f.IO.Out
	if tty {
		fmt.Fprintln(w, "\nShare of each account")
	}
	t := newTable(f, "ACCOUNT", "TIER", "MESSAGES", "SHARE").Kind("account")
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
	t = newTable(f, "TIER", "FINISH", "SOONER").Kind("one_more")
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

// printPlanRecords is the piped form: every line a record that says its
// kind (recipients first, which scripts read), the terminal's figures and
// texts with each duration in seconds beside its text, then the tables'
// rows as account and one_more records.
func printPlanRecords(f *Factory, p report.Plan, file runner.Summary, loc *time.Location) error {
	w := f.IO.Out
	when := func(t time.Time) string { return t.In(loc).Format("2006-01-02 15:04:05 MST") }
	secs := func(s float64) string { return strconv.FormatFloat(s, 'f', 0, 64) }
	text := func(s float64) string { return humanDuration(time.Duration(s * float64(time.Second))) }
	recs := [][]string{
		{"recipients", "count", strconv.Itoa(p.Recipients), "skipped", strconv.Itoa(p.Skipped)},
		{"phone_column", "column", file.Phone.Name, "named", strconv.FormatBool(file.Phone.Named), "unused", strings.Join(file.Phone.Unused, ",")},
		{"start", "at", when(p.Start)},
	}
	if p.Finish == nil {
		recs = append(recs, []string{"finish", "at", "never", "reason", p.Never})
	} else {
		recs = append(recs, []string{"finish", "at", when(*p.Finish), "seconds", secs(p.Seconds), "text", text(p.Seconds),
			"quota_resets", strconv.Itoa(p.QuotaResets)})
	}
	for _, r := range p.Reach {
		recs = append(recs, []string{"messaging_limit", "portfolio", r.Name, "distinct_recipients_24h", strconv.Itoa(r.Allowed),
			"accounts", strings.Join(r.Accounts, ",")})
	}
	if p.SendWindow != "" && p.WithoutWindow != nil {
		rec := []string{"send_window", "window", p.SendWindow}
		if ww := p.WithoutWindow; ww.Finish == nil {
			rec = append(rec, "without_finish", "never")
		} else {
			rec = append(rec, "without_finish", when(*ww.Finish), "without_seconds", secs(ww.Seconds), "without_text", text(ww.Seconds))
			if p.Finish != nil {
				rec = append(rec, "adds_seconds", secs(p.Seconds-ww.Seconds), "adds_text", text(p.Seconds-ww.Seconds))
			}
		}
		recs = append(recs, rec)
	}
	for _, r := range recs {
		if err := ui.WriteRecord(w, r[0], r[1:]...); err != nil {
			return err
		}
	}
	defer func(s *ui.IOStreams) { f.IO = s }(f.IO)
	f.IO = f.IO.AsRecords()
	return printPlanTables(f, p, loc)
}

// humanDuration rounds a forecast for people: "about 2 d 4 h".
var humanDuration = report.HumanDuration
