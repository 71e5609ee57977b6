package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
)

// statusJSON is the documented shape of `wasend status --json`.
type statusJSON struct {
	Database    string              `json:"database"`
	Accounts    []accountStatusJSON `json:"accounts"`
	GlobalLimit *globalJSON         `json:"global_limit"`
	Campaigns   []campaignJSON      `json:"campaigns"`
}

type globalJSON struct {
	Rate   float64 `json:"rate_per_second"`
	Burst  int     `json:"burst"`
	Tokens float64 `json:"tokens"`
}

type campaignJSON struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	State       string     `json:"state"`
	PauseReason string     `json:"pause_reason,omitempty"`
	Source      string     `json:"source"`
	Total       int        `json:"total"`
	Sent        int        `json:"sent"`
	Pending     int        `json:"pending"`
	Sending     int        `json:"sending"`
	Failed      int        `json:"failed"`
	Unknown     int        `json:"unknown"`
	Skipped     int        `json:"skipped"`
	CreatedAt   time.Time  `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	// Health: share of requests throttled (overall and last hour), and
	// requests per message tried.
	Ready            int           `json:"ready"`         // pending rows that may go now
	WaitingRetry     int           `json:"waiting_retry"` // pending rows waiting for a retry time
	StartedAt        *time.Time    `json:"started_at,omitempty"`
	ThrottleRate     float64       `json:"throttle_rate"`
	ThrottleRateHour float64       `json:"throttle_rate_1h"`
	AvgAttempts      float64       `json:"avg_attempts"`
	DroppedAccounts  []droppedJSON `json:"dropped_accounts,omitempty"`
	ETA              *etaJSON      `json:"eta,omitempty"`
	// The same figures as an account's health, over this campaign's
	// requests: last hour and overall.
	LastHour healthJSON `json:"last_hour"`
	Overall  healthJSON `json:"overall"`
	// Delivery is what status webhooks said, once one reported.
	Delivery *deliveryJSON `json:"delivery,omitempty"`
}

// etaJSON is when a running campaign's open rows will have gone, by the
// planner: rates, bursts, caps and quota days all counted.
type etaJSON struct {
	Finish      *time.Time `json:"finish,omitempty"` // nil: never, with today's limits
	Seconds     float64    `json:"seconds"`
	QuotaResets int        `json:"quota_resets"`
	Text        string     `json:"text"`
}

// etaFunc reads the accounts and global bucket once and returns a function
// forecasting any campaign's open rows with them.
func etaFunc(ctx context.Context, f *Factory, st *store.Store) (func(open int, dropped []store.Dropped) *etaJSON, error) {
	accts, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	gl, tokens, on, err := st.GlobalLimit(ctx)
	if err != nil {
		return nil, err
	}
	loc, err := f.Location()
	if err != nil {
		return nil, err
	}
	now := f.Now()
	return func(open int, dropped []store.Dropped) *etaJSON {
		var usable []campaign.AccountStatus
		for _, a := range accts {
			if !slices.ContainsFunc(dropped, func(d store.Dropped) bool { return d.Account == a.Name }) {
				usable = append(usable, a)
			}
		}
		var global *ratelimit.Bucket
		if on {
			global = &ratelimit.Bucket{Tokens: tokens, At: now}
		}
		fc := planner.ETA(now, loc, open, usable, global, gl)
		if fc.Capped || fc.Finish.IsZero() {
			return &etaJSON{Text: "never with the current limits: " + fc.Reason}
		}
		fin := fc.Finish.UTC()
		text := humanDuration(fc.Duration)
		if fc.QuotaResets > 0 {
			text += fmt.Sprintf(" (needs %d quota reset%s)", fc.QuotaResets, plural(fc.QuotaResets))
		}
		return &etaJSON{Finish: &fin, Seconds: fc.Duration.Seconds(), QuotaResets: fc.QuotaResets, Text: text}
	}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// campaignsJSON reads every campaign with its counts, health and ETA.
func campaignsJSON(ctx context.Context, f *Factory, st *store.Store) ([]campaignJSON, error) {
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	eta, err := etaFunc(ctx, f, st)
	if err != nil {
		return nil, err
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	limits := map[string]campaign.AccountStatus{}
	for _, a := range accts {
		limits[a.Name] = a
	}
	out := []campaignJSON{}
	for _, c := range camps {
		n, err := st.Counts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		stats, err := st.CampaignStats(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		dropped, err := st.DroppedAccounts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		q, err := st.CampaignQueue(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		cj := toCampaignJSON(c, n)
		cj.Ready, cj.WaitingRetry = q.Ready, q.Waiting
		if !q.Started.IsZero() {
			t := q.Started.UTC()
			cj.StartedAt = &t
		}
		cj.ThrottleRate, cj.ThrottleRateHour, cj.AvgAttempts = stats.ThrottleRate(), stats.HourThrottleRate(), stats.AvgAttempts()
		for _, d := range dropped {
			cj.DroppedAccounts = append(cj.DroppedAccounts, droppedJSON{d.Account, d.Reason, d.ErrorCode, d.At.UTC()})
		}
		if c.State == campaign.CampaignRunning && n.Open() > 0 {
			cj.ETA = eta(n.Open(), dropped)
		}
		working := c.State == campaign.CampaignRunning && q.Ready > 0
		hour := store.Activity{Attempts: stats.HourAttempts, Throttled: stats.HourThrottled, Messages: stats.HourMessages}
		all := store.Activity{Attempts: stats.Attempts, Throttled: stats.Throttled, Messages: stats.MessagesAttempted}
		if cj.LastHour, err = campaignHealth(ctx, st, c.ID, f.Now().Add(-time.Hour), hour, limits, working); err != nil {
			return nil, err
		}
		if cj.Overall, err = campaignHealth(ctx, st, c.ID, time.Time{}, all, limits, working); err != nil {
			return nil, err
		}
		if cj.Delivery, err = campaignDelivery(ctx, st, c.ID, unknownGrace); err != nil {
			return nil, err
		}
		out = append(out, cj)
	}
	return out, nil
}

type droppedJSON struct {
	Account   string    `json:"account"`
	Reason    string    `json:"reason"`
	ErrorCode int       `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

func toCampaignJSON(c campaign.Campaign, n campaign.Counts) campaignJSON {
	out := campaignJSON{
		ID: c.ID, Name: c.Name, State: string(c.State), PauseReason: c.PauseReason, Source: c.Source,
		Total: n.Total(), Sent: n[campaign.Sent], Pending: n[campaign.Pending], Sending: n[campaign.Sending],
		Failed: n[campaign.Failed], Unknown: n[campaign.Unknown], Skipped: c.Skipped, CreatedAt: c.CreatedAt.UTC(),
	}
	if !c.FinishedAt.IsZero() {
		t := c.FinishedAt.UTC()
		out.FinishedAt = &t
	}
	return out
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

--json prints one object with a stable shape (see README). --watch refreshes
in place every INTERVAL (default 2s) until Ctrl-C.`,
		Example: `  wasend status
  wasend status --watch
  wasend status --json | jq '.campaigns[] | select(.state == "running") | .eta.text'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return f.withStore(ctx, func(st *store.Store) error {
				if watch <= 0 {
					return showStatus(ctx, f, st, asJSON)
				}
				for {
					if f.IO.IsStdoutTTY() {
						io.WriteString(f.IO.Out, "\x1b[H\x1b[2J") // home, clear: redraw in place
						fmt.Fprintf(f.IO.Out, "wasend status, every %v (Ctrl-C to stop)  %s\n\n", watch, f.Now().Format(time.TimeOnly))
					}
					if err := showStatus(ctx, f, st, asJSON); err != nil {
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

// showStatus prints the status once.
func showStatus(ctx context.Context, f *Factory, st *store.Store, asJSON bool) error {
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	gl, tokens, on, err := st.GlobalLimit(ctx)
	if err != nil {
		return err
	}
	camps, err := campaignsJSON(ctx, f, st)
	if err != nil {
		return err
	}
	health, err := accountsHealth(ctx, st, accts, f.Now(), f.location())
	if err != nil {
		return err
	}
	if err := addAccountDelivery(ctx, st, health); err != nil {
		return err
	}
	out := statusJSON{Database: st.Path(), Accounts: health, Campaigns: camps}
	if on {
		out.GlobalLimit = &globalJSON{Rate: gl.Rate, Burst: gl.Burst, Tokens: tokens}
	}
	if asJSON {
		return f.IO.JSON(out)
	}
	tty := f.IO.IsStdoutTTY()
	if tty {
		io.WriteString(f.IO.Out, "Accounts\n")
	}
	if err := printAccounts(f.IO, accts, f.location()); err != nil {
		return err
	}
	if tty {
		io.WriteString(f.IO.Out, "\nAccount health (last hour / overall)\n")
		if err := printHealth(f, health); err != nil {
			return err
		}
		g := "off"
		if on {
			g = formatRate(gl.Rate) + " burst " + strconv.Itoa(gl.Burst)
		}
		io.WriteString(f.IO.Out, "\nGlobal limit: "+g+"\n\nCampaigns\n")
	}
	if err := printCampaigns(f, out.Campaigns); err != nil {
		return err
	}
	return printStatusDelivery(f, out.Campaigns)
}

func printCampaigns(f *Factory, camps []campaignJSON) error {
	t := newTable(f, "ID", "NAME", "STATE", "TOTAL", "SENT", "PENDING", "READY", "RETRY WAIT", "FAILED", "UNKNOWN", "SKIPPED",
		"THROTTLED 1H/ALL", "ATTEMPTS/MSG 1H/ALL", "TOKEN USE 1H/ALL", "STARTED", "ETA")
	tty := f.IO.IsStdoutTTY()
	loc := f.location()
	for _, c := range camps {
		state := c.State
		if c.PauseReason != "" {
			state += ": " + c.PauseReason
		}
		t.Row(strconv.FormatInt(c.ID, 10), c.Name, state, strconv.Itoa(c.Total), strconv.Itoa(c.Sent),
			strconv.Itoa(c.Pending+c.Sending), strconv.Itoa(c.Ready), strconv.Itoa(c.WaitingRetry),
			strconv.Itoa(c.Failed), strconv.Itoa(c.Unknown), strconv.Itoa(c.Skipped),
			healthCell(c.LastHour, c.Overall, "throttle_rate", tty, func(h healthJSON) string { return fmt.Sprintf("%.1f%%", h.ThrottleRate*100) }),
			healthCell(c.LastHour, c.Overall, "avg_attempts", tty, func(h healthJSON) string { return fmt.Sprintf("%.2f", h.AvgAttempts) }),
			healthCell(c.LastHour, c.Overall, "utilisation", tty, func(h healthJSON) string { return fmt.Sprintf("%.0f%%", h.Utilisation*100) }),
			startedText(c.StartedAt, loc), etaText(c.ETA))
	}
	if len(camps) == 0 && f.IO.IsStdoutTTY() {
		f.IO.Out.Write([]byte("no campaigns yet\n"))
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, c := range camps {
		for _, d := range c.DroppedAccounts {
			f.IO.Warnf("campaign %d: account %s stopped: %s", c.ID, d.Account, d.Reason)
		}
	}
	return nil
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

// accountStatusJSON is an account in `status --json`: its settings and
// state, plus how it has been doing.
type accountStatusJSON struct {
	accountJSON
	Sent24h  int        `json:"sent_24h"`
	LastHour healthJSON `json:"last_hour"`
	Overall  healthJSON `json:"overall"`
	// Delivery is what status webhooks said of its messages, over every
	// campaign, once one reported.
	Delivery *deliveryJSON `json:"delivery,omitempty"`
}

// healthJSON are the operating figures of an account over a window.
// Unhealthy lists the ones outside their healthy range: throttle_rate
// (>= 1 %), avg_attempts (>= 1.5), utilisation (outside 70-100 % while
// work is waiting).
type healthJSON struct {
	Attempts     int      `json:"attempts"`
	ThrottleRate float64  `json:"throttle_rate"`
	AvgAttempts  float64  `json:"avg_attempts"`
	Utilisation  float64  `json:"utilisation"`
	Unhealthy    []string `json:"unhealthy,omitempty"`
}

func accountsHealth(ctx context.Context, st *store.Store, accts []campaign.AccountStatus, now time.Time, loc *time.Location) ([]accountStatusJSON, error) {
	hour, err := st.AccountActivity(ctx, now.Add(-time.Hour))
	if err != nil {
		return nil, err
	}
	day, err := st.AccountActivity(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	all, err := st.AccountActivity(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	waiting, err := st.WorkWaiting(ctx)
	if err != nil {
		return nil, err
	}
	base := accountsJSON(accts, loc)
	out := make([]accountStatusJSON, len(accts))
	for i, a := range accts {
		rate := effectiveRate(a)
		out[i] = accountStatusJSON{
			accountJSON: base[i],
			Sent24h:     day[a.Name].Sent,
			LastHour:    health(hour[a.Name], rate, a.Limits.Burst, waiting),
			Overall:     health(all[a.Name], rate, a.Limits.Burst, waiting),
		}
	}
	return out, nil
}

func health(a store.Activity, rate float64, burst int, workWaiting bool) healthJSON {
	h := healthJSON{Attempts: a.Attempts, ThrottleRate: a.ThrottleRate(), AvgAttempts: a.AvgAttempts(),
		Utilisation: a.Utilisation(rate, burst)}
	if a.Attempts == 0 {
		return h
	}
	if h.ThrottleRate >= 0.01 {
		h.Unhealthy = append(h.Unhealthy, "throttle_rate")
	}
	if h.AvgAttempts >= 1.5 {
		h.Unhealthy = append(h.Unhealthy, "avg_attempts")
	}
	if workWaiting && (h.Utilisation < 0.7 || h.Utilisation > 1) {
		h.Unhealthy = append(h.Unhealthy, "utilisation")
	}
	return h
}

func printHealth(f *Factory, accts []accountStatusJSON) error {
	tty := f.IO.IsStdoutTTY()
	t := newTable(f, "NAME", "SENT 24H", "THROTTLED", "ATTEMPTS/MSG", "TOKEN USE")
	for _, a := range accts {
		t.Row(a.Name, strconv.Itoa(a.Sent24h),
			healthCell(a.LastHour, a.Overall, "throttle_rate", tty, func(h healthJSON) string { return fmt.Sprintf("%.1f%%", h.ThrottleRate*100) }),
			healthCell(a.LastHour, a.Overall, "avg_attempts", tty, func(h healthJSON) string { return fmt.Sprintf("%.2f", h.AvgAttempts) }),
			healthCell(a.LastHour, a.Overall, "utilisation", tty, func(h healthJSON) string { return fmt.Sprintf("%.0f%%", h.Utilisation*100) }))
	}
	return t.Render()
}

func etaText(e *etaJSON) string {
	if e == nil {
		return "-"
	}
	return e.Text
}

// campaignHealth is a campaign's health since a time: throttled share and
// attempts per message from its requests, and tokens used out of those its
// accounts earned while sending it.
func campaignHealth(ctx context.Context, st *store.Store, id int64, since time.Time, req store.Activity,
	accts map[string]campaign.AccountStatus, working bool) (healthJSON, error) {
	act, err := st.Activity(ctx, since, id)
	if err != nil {
		return healthJSON{}, err
	}
	var avail float64
	for name, a := range act {
		if acct, ok := accts[name]; ok && a.Attempts > 0 {
			avail += a.Available(effectiveRate(acct), acct.Limits.Burst)
		}
	}
	h := health(req, 0, 1, false)
	h.Utilisation = 0
	if avail > 0 {
		h.Utilisation = min(float64(req.Attempts)/avail, 1)
	}
	if working && req.Attempts > 0 && h.Utilisation < 0.7 {
		h.Unhealthy = append(h.Unhealthy, "utilisation")
	}
	return h, nil
}

// healthCell shows one figure for the last hour and overall, each flagged
// when outside its healthy range.
func healthCell(hour, all healthJSON, name string, tty bool, format func(healthJSON) string) string {
	return flag(format(hour), slices.Contains(hour.Unhealthy, name), tty) + " / " + flag(format(all), slices.Contains(all.Unhealthy, name), tty)
}

func startedText(t *time.Time, loc *time.Location) string {
	if t == nil {
		return "-"
	}
	return t.In(loc).Format("01-02 15:04")
}
