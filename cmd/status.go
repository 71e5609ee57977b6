package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
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

// sandboxHint points at the sandbox's own database from an empty default
// one, when the demo (`campaign run --sandbox`) has filled it: its
// campaigns are not in the default database.
func (f *Factory) sandboxHint() {
	if f.Sandbox || f.DBPath != "" || f.Getenv("WASEND_DB") != "" {
		return
	}
	path, err := f.databasePath(true)
	if err != nil {
		return
	}
	if _, err := os.Stat(path); err == nil {
		f.IO.Infof("this database is empty; the sandbox demo's is apart: wasend status --sandbox")
	}
}

// reporter reads the store at the factory's clock, in the zone of quota
// days fixed in the database (ETAs count its midnights).
func (f *Factory) reporter(st driver.Driver) report.Reporter {
	return report.Reporter{Src: st, Reads: readmodel.New(st), Now: f.Now(), Loc: st.Location(), Live: runner.Liveness(report.LiveWithin)}
}

func newStatusCmd(f *Factory) *cobra.Command {
	var (
		asJSON bool
		watch  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show accounts, limits, campaigns and how they are doing",
		Long: `Show each account — tier, configured and effective rate, burst, tokens now,
sent today / daily cap, sent in the last 24 h, state (ok; waiting for a token;
cooling down until T after throttling; restricted until T; capped until the
next quota reset; disabled) and last error code — with its health over the
last hour and overall: share of requests throttled, attempts per message and
token use. Then each campaign: total, sent, pending (ready now / waiting for a
retry time), failed, unknown, state, throttle share, attempts per message and
an ETA that counts rates, bursts, caps and quota days.

Values outside their healthy range are flagged (red on a terminal, "!" when
piped): throttled >= 1 %, attempts per message >= 1.5, token use outside
70-100 % while work is waiting.

Piped, every line is a record that names its kind and fields (kind=account
name=main-01 …, kind=campaign id=1 …), every table kept. --json prints one
object with a stable shape (see docs/status.md). --watch refreshes in place
every INTERVAL (default 2s) until Ctrl-C.`,
		Example: `  wasend status
  wasend status --watch
  wasend status --json |
      jq '.campaigns[] | select(.state == "running") | .eta.text'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return f.withStore(ctx, func(st driver.Driver) error {
				if watch <= 0 {
					return showStatus(ctx, f, st, asJSON)
				}
				for {
					if f.IO.IsStdoutTTY() {
						io.WriteString(f.IO.Out, "\x1b[H\x1b[2J") // home, clear: redraw in place
						fmt.Fprintf(f.IO.Out, "wasend status, every %v (Ctrl-C to stop)  %s\n\n", watch, f.Now().Format(time.TimeOnly))
					}
					if err := showStatus(ctx, f, st, asJSON); err != nil {
						if ctx.Err() != nil {
							return nil // Ctrl-C landed while reading: still a clean end
						}
						return err
					}
					select {
					case <-ctx.Done():
						return nil // Ctrl-C is how a watch ends
					case <-time.After(watch):
					}
					if !f.IO.IsStdoutTTY() {
						fmt.Fprintln(f.IO.Out)
					}
				}
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	cmd.Flags().DurationVar(&watch, "watch", 0, "refresh every `INTERVAL` until Ctrl-C")
	cmd.Flags().Lookup("watch").NoOptDefVal = "2s"
	return cmd
}

// readStatus is what status reads, at the factory's clock (`top` reads it
// each second). Under --limits the tokens claims take are Redis's: the
// report reads them in place of this database's own.
// through, when not nil, is the read models as the reader reads them.
func readStatus(ctx context.Context, f *Factory, st driver.Driver, through func(report.Reads) report.Reads) (report.Status, sharedTokens, error) {
	shared := f.readSharedTokens(ctx, st)
	rep := f.reporter(st)
	if through != nil {
		rep.Reads = through(rep.Reads)
	}
	if shared.On {
		rep.Src = sharedSource{rep.Src, shared}
	}
	out, err := rep.Status(ctx)
	if err != nil {
		return out, shared, err
	}
	for i := range out.Accounts {
		_, out.Accounts[i].TokensShared = shared.Tokens[out.Accounts[i].Name]
	}
	return out, shared, nil
}

// showStatus prints the status once.
func showStatus(ctx context.Context, f *Factory, st driver.Driver, asJSON bool) error {
	out, shared, err := readStatus(ctx, f, st, nil)
	if err != nil {
		return err
	}
	if o := out.QuotaResetOverdue; o != nil {
		o.Command = "wasend quota reset" + dbHint(f)
	}
	if asJSON {
		for i := range out.Campaigns {
			c, err := st.Campaign(ctx, out.Campaigns[i].ID)
			if err != nil {
				return err
			}
			if out.Campaigns[i].Cost, err = runner.CostBrief(ctx, st, c, f.Now()); err != nil {
				return err
			}
		}
		return f.IO.JSON(out)
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	if len(accts) == 0 && len(out.Campaigns) == 0 {
		f.sandboxHint()
	}
	tty := f.IO.IsStdoutTTY()
	if !tty {
		// Piped, every line is a record that says its kind (kind=account,
		// kind=campaign, …), the tables' headings left out: docs/status.md.
		defer func(s *ui.IOStreams) { f.IO = s }(f.IO)
		f.IO = f.IO.AsRecords()
	}
	heading := func(s string) {
		if tty {
			io.WriteString(f.IO.Out, s)
		}
	}
	heading("Accounts\n")
	if err := printAccounts(f.IO, accts, f.location(), report.Sending(out.Campaigns), dbHint(f), shared, nil); err != nil {
		return err
	}
	heading("\nAccount health (last hour / overall)\n")
	if err := printHealth(f, out.Accounts); err != nil {
		return err
	}
	if err := printTierProgress(f, out.Accounts); err != nil {
		return err
	}
	if tty {
		g := "off"
		if out.GlobalLimit != nil {
			g = formatRate(out.GlobalLimit.Rate) + " burst " + strconv.Itoa(out.GlobalLimit.Burst)
		}
		io.WriteString(f.IO.Out, "\nGlobal limit: "+g+"\n")
	} else if err := globalLimitRecord(f, out.GlobalLimit); err != nil {
		return err
	}
	ports, err := st.Portfolios(ctx)
	if err != nil {
		return err
	}
	if limited(ports) {
		heading("\nPortfolios (distinct recipients in the last 24 h)\n")
		if err := printPortfolios(f, ports); err != nil {
			return err
		}
	}
	heading("\nCampaigns\n")
	if err := printCampaigns(f, out.Campaigns); err != nil {
		return err
	}
	if err := printStatusDelivery(f, out.Campaigns); err != nil {
		return err
	}
	if len(out.Runners) > 0 {
		heading("\nRunners\n")
		if err := printRunners(f, out.Runners); err != nil {
			return err
		}
	}
	for _, p := range ports {
		if p.Limit > 0 && p.Used >= p.Allowed && !p.FreesAt.IsZero() {
			f.IO.Warnf("portfolio %s has used its messaging limit (%d of %d distinct recipients in 24 h): new recipients wait until %s",
				p.Name, p.Used, p.Allowed, p.FreesAt.In(f.location()).Format(time.DateTime))
		}
	}
	kept, err := readmodel.New(st).WebhookInboxReasons(ctx, f.Now().Add(-24*time.Hour))
	if err != nil {
		return err
	}
	if kept.Bodies > 0 {
		f.IO.Warnf("webhooks: %d bodies of the last 24 h kept with a reason and skipped (the rest applied); latest, received %s: %s",
			kept.Bodies, kept.LatestAt.In(f.location()).Format(time.DateTime), oneLine(kept.Latest))
	}
	if o := out.QuotaResetOverdue; o != nil {
		f.IO.Warnf("quota day %s is still open for %s, but today is %s in the zone of quota days (%s): the quota reset did not run; "+
			"start the day with `%s`, and check the crontab (CRON_TZ=%s, see `wasend quota reset --help`)",
			o.OpenDay, strings.Join(o.Accounts, ", "), o.Today, o.Zone, o.Command, o.Zone)
	}
	return nil
}

// globalLimitRecord is the piped form of the "Global limit:" line.
func globalLimitRecord(f *Factory, g *report.Global) error {
	if g == nil {
		return ui.WriteRecord(f.IO.Out, "global_limit", "rate", "off")
	}
	return ui.WriteRecord(f.IO.Out, "global_limit", "rate", formatRate(g.Rate), "burst", strconv.Itoa(g.Burst))
}

// limited reports whether any portfolio has a messaging limit to show.
func limited(ps []campaign.PortfolioStatus) bool {
	for _, p := range ps {
		if p.Limit > 0 || !p.Own {
			return true
		}
	}
	return false
}

// printTierProgress says, under the health table, how far each auto-tier
// account is on its way to the next tier (warm-up).
func printTierProgress(f *Factory, accts []report.AccountStatus) error {
	var t *ui.Table
	for _, a := range accts {
		p := a.TierProgress
		if p == nil || p.Next == "" {
			continue
		}
		if t == nil {
			if f.IO.IsStdoutTTY() {
				io.WriteString(f.IO.Out, "\nWarm-up (auto-tier)\n")
			}
			// The progress text is long: it is cut to the width, never wrapped.
			t = newTable(f, "NAME", "TIER", "PROGRESS").Kind("warmup").Truncate("NAME", "PROGRESS")
		}
		t.Row(a.Name, a.Tier, p.Text)
	}
	if t == nil {
		return nil
	}
	return t.Render()
}

// printCampaigns prints the campaign table. On a narrow terminal the
// health, queue and start columns go first; pause reasons and dropped
// accounts print below the table (on stderr), never in a column.
func printCampaigns(f *Factory, camps []report.Campaign) error {
	t := newTable(f, "ID", "NAME", "STATE", "TOTAL", "SENT", "PENDING", "READY", "RETRY WAIT", "WINDOW WAIT", "FAILED", "UNKNOWN",
		"EXPIRED", "SKIPPED", "THROTTLED 1H/ALL", "ATTEMPTS/MSG 1H/ALL", "TOKEN USE 1H/ALL", "STARTED", "ETA").
		Kind("campaign").Truncate("NAME", "ETA").
		// A long state ("waiting for shared limits", "scheduled for …")
		// costs the ETA before it is cut; the warnings below say it whole.
		TruncateLast("STATE").
		Optional("TOKEN USE 1H/ALL", "ATTEMPTS/MSG 1H/ALL", "WINDOW WAIT", "RETRY WAIT", "READY", "STARTED", "EXPIRED", "SKIPPED",
			"THROTTLED 1H/ALL", "ETA")
	tty := f.IO.IsStdoutTTY()
	loc := f.location()
	for _, c := range camps {
		state := c.State
		if state == report.StateScheduled && c.StartAt != nil {
			state += " for " + c.StartAt.In(loc).Format("2006-01-02 15:04 MST")
		}
		t.Row(strconv.FormatInt(c.ID, 10), c.Name, state, strconv.Itoa(c.Total), strconv.Itoa(c.Sent),
			strconv.Itoa(c.Pending+c.Sending), strconv.Itoa(c.Ready), strconv.Itoa(c.WaitingRetry), strconv.Itoa(c.WaitingWindow),
			strconv.Itoa(c.Failed), strconv.Itoa(c.Unknown), strconv.Itoa(c.Expired), strconv.Itoa(c.Skipped),
			healthCell(c.LastHour, c.Overall, "throttle_rate", tty, func(h report.Health) string { return fmt.Sprintf("%.1f%%", h.ThrottleRate*100) }),
			healthCell(c.LastHour, c.Overall, "avg_attempts", tty, func(h report.Health) string { return fmt.Sprintf("%.2f", h.AvgAttempts) }),
			healthCell(c.LastHour, c.Overall, "utilisation", tty, func(h report.Health) string { return fmt.Sprintf("%.0f%%", h.Utilisation*100) }),
			startedText(c.StartedAt, loc), etaText(c.ETA))
	}
	if len(camps) == 0 && f.IO.IsStdoutTTY() {
		f.IO.Out.Write([]byte("no campaigns yet\n"))
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, c := range camps {
		if c.PauseReason != "" {
			f.IO.Warnf("campaign %d is paused: %s (resume it with `wasend campaign resume %d%s`)", c.ID, oneLine(c.PauseReason), c.ID, dbHint(f))
		}
		for _, d := range c.DroppedAccounts {
			f.IO.Warnf("campaign %d: account %s stopped: %s", c.ID, d.Account, oneLine(d.Reason))
		}
		if o := c.Outage; o != nil {
			f.IO.Warnf("campaign %d: Cloud API OUTAGE since %s, no account gets an answer (%s); next try %s; nothing is failed meanwhile",
				c.ID, o.Since.In(loc).Format(time.DateTime), oneLine(o.Error), o.NextProbe.In(loc).Format(time.TimeOnly))
		}
		if e := c.ETA; e != nil && e.Finish == nil {
			f.IO.Warnf("campaign %d: ETA %s", c.ID, oneLine(e.Text))
		}
		if w := c.LimitsWait; w != nil {
			f.IO.Warnf("campaign %d: %s", c.ID, limitsWaitText(w.Lost, w.Since.In(loc).Format(time.DateTime), oneLine(w.Error), dbHint(f), f.LimitsURL() != ""))
		}
		if c.Held > 0 {
			f.IO.Warnf("campaign %d: %s", c.ID, heldText(c.Held, c.HeldStop))
		}
	}
	return nil
}

// printRunners lists the sender processes by host: heartbeat age, leased
// rows, and lost (silent two heartbeats: its leases will be taken back).
func printRunners(f *Factory, rs []report.Runner) error {
	t := newTable(f, "HOST", "PID", "CAMPAIGN", "HEARTBEAT", "LEASED", "STATE").Kind("runner").Truncate("HOST")
	for _, r := range rs {
		state := "live"
		if r.Lost && f.IO.IsStdoutTTY() {
			state = flag("lost", true, true)
		} else if r.Lost {
			state = "lost"
		}
		age := (time.Duration(r.HeartbeatAge*float64(time.Second)) / time.Second * time.Second).String() + " ago"
		t.Row(r.Host, strconv.Itoa(r.PID), strconv.FormatInt(r.Campaign, 10), age, strconv.Itoa(r.Leased), state)
	}
	return t.Render()
}

// flag marks a value outside its healthy range: red on a terminal, a "!"
// when piped.
func flag(v string, bad, tty bool) string {
	switch {
	case !bad:
		return v
	case tty:
		return "\x1b[31m" + v + "\x1b[0m"
	}
	return v + "!"
}

func printHealth(f *Factory, accts []report.AccountStatus) error {
	tty := f.IO.IsStdoutTTY()
	t := newTable(f, "NAME", "SENT 24H", "THROTTLED", "ATTEMPTS/MSG", "TOKEN USE").Kind("account_health").Truncate("NAME")
	for _, a := range accts {
		t.Row(a.Name, strconv.Itoa(a.Sent24h),
			healthCell(a.LastHour, a.Overall, "throttle_rate", tty, func(h report.Health) string { return fmt.Sprintf("%.1f%%", h.ThrottleRate*100) }),
			healthCell(a.LastHour, a.Overall, "avg_attempts", tty, func(h report.Health) string { return fmt.Sprintf("%.2f", h.AvgAttempts) }),
			healthCell(a.LastHour, a.Overall, "utilisation", tty, func(h report.Health) string { return fmt.Sprintf("%.0f%%", h.Utilisation*100) }))
	}
	return t.Render()
}

// etaText is the ETA cell, the same on a terminal and piped: the time left
// alone, as a long text would be cut (show and --json have it whole; the
// warnings below say why one never comes).
func etaText(e *report.ETA) string {
	if e == nil {
		return "-"
	}
	return e.Brief()
}

// healthCell shows one figure for the last hour and overall, each flagged
// when outside its healthy range.
func healthCell(hour, all report.Health, name string, tty bool, format func(report.Health) string) string {
	return flag(format(hour), hour.Bad(name), tty) + " / " + flag(format(all), all.Bad(name), tty)
}

func startedText(t *time.Time, loc *time.Location) string {
	if t == nil {
		return "-"
	}
	return t.In(loc).Format("01-02 15:04")
}
