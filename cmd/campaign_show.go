package cmd

import (
	"fmt"
	"io"
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

func newCampaignShowCmd(f *Factory) *cobra.Command {
	var (
		asJSON bool
		grace  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one campaign in detail",
		Long: `Show campaign ID in detail: its settings and state, its messages by state,
its failures by Graph error code (with a sample message each), the pending rows
an error put back to be sent again (by code, with the next try), each account's
share (sent, failed, unknown, requests, throttled), its timings and average
send rate, and the accounts dropped from it. Once status webhooks reported on
it: delivered, read and failed after send, with rates, per campaign and per
account, the failed statuses by code with what became of their rows (kept
failed, put back, sent again), and the unknown rows no webhook settled within
--unknown-grace.

On a terminal the sections print as aligned blocks; piped, every line is one
tab-separated record whose first field says what it is (name, count, error,
account, dropped, …), for grep and awk.`,
		Example: `  wasend campaign show 3
  wasend campaign show 3 | awk -F'\t' '$1 == "error" { print $2, $3 }'
  wasend campaign show 3 --json | jq '.errors[] | select(.count > 10)'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				d, err := readmodel.New(st).CampaignDetail(cmd.Context(), id)
				if err != nil {
					return err
				}
				eta, err := f.reporter(st).CampaignETA(cmd.Context(), d.Campaign)
				if err != nil {
					return err
				}
				// The true state: running only while a process sends it.
				state, err := f.reporter(st).State(cmd.Context(), d.Campaign, !d.FirstAttempt.IsZero(), d.Dropped)
				if err != nil {
					return err
				}
				d.Campaign.State = campaign.CampaignState(state)
				if state == report.StateWaitLimits {
					if w, err := readmodel.New(st).LimitsWait(cmd.Context(), id); err == nil && !w.Since.IsZero() {
						f.IO.Warnf("campaign %d: %s", id, limitsWaitText(w.Reason == campaign.WaitLimitsLost,
							w.Since.In(f.location()).Format(time.DateTime), oneLine(w.Error), dbHint(f), f.LimitsURL() != ""))
					}
				}
				dl, err := campaignDelivery(cmd.Context(), f, st, id, grace)
				if err != nil {
					return err
				}
				var byAccount map[string]readmodel.DeliveryFigures
				if dl != nil {
					if byAccount, err = readmodel.New(st).AccountDelivery(cmd.Context(), id); err != nil {
						return err
					}
				}
				cost, err := runner.CostBrief(cmd.Context(), st, d.Campaign, f.Now())
				if err != nil {
					return err
				}
				if asJSON {
					j := toShowJSON(d)
					j.Delivery = dl
					j.ETA = eta
					j.Cost = cost
					return f.IO.JSON(j)
				}
				if !f.IO.IsStdoutTTY() {
					if err := printShowRecords(f.IO.Out, d, eta); err != nil {
						return err
					}
					if cost != nil {
						if err := ui.WriteRecord(f.IO.Out, "cost", "currency", cost.Currency, "estimate", cost.Estimate, "actual", cost.Actual,
							"budget", cost.Budget, "accepted_or_in_flight", cost.Committed, "not_priced", cost.NotPriced); err != nil {
							return err
						}
					}
					return printDeliveryRecords(f.IO.Out, dl, byAccount)
				}
				loc, err := f.Location()
				if err != nil {
					return err
				}
				if err := printShow(f, d, eta, loc); err != nil {
					return err
				}
				if cost != nil {
					kvFit(f.IO.Out, f.IO.TerminalWidth(), "Cost", costText(cost, id))
				}
				return printShowDelivery(f, id, dl, byAccount, grace, d.FailedStatuses)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	cmd.Flags().DurationVar(&grace, "unknown-grace", report.UnknownGrace, "after this long without a status webhook, an unknown row is reported as most likely never accepted")
	return cmd
}

// showJSON is the documented shape of `wasend campaign show --json`.
type showJSON struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	Source      string     `json:"source"`
	Kind        string     `json:"kind"`
	Template    string     `json:"template,omitempty"`
	Lang        string     `json:"lang,omitempty"`
	Params      []string   `json:"params,omitempty"`
	Text        string     `json:"text,omitempty"`
	State       string     `json:"state"`
	PauseReason string     `json:"pause_reason,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	Imported    int        `json:"imported"`
	Skipped     int        `json:"skipped"`
	// The schedule: --at, the first claim after it, --expire-after (0:
	// never), when pending rows expire, and the send window.
	StartAt            *time.Time `json:"start_at,omitempty"`
	BeganAt            *time.Time `json:"began_at,omitempty"`
	ExpireAfterSeconds float64    `json:"expire_after_seconds,omitempty"`
	ExpiresAt          *time.Time `json:"expires_at,omitempty"`
	SendWindow         string     `json:"send_window,omitempty"` // in each recipient's zone
	// How it shares the accounts: priority, weight, borrow (seconds of an
	// account's rate a high campaign may go ahead).
	Priority      string  `json:"priority"`
	Weight        int     `json:"weight"`
	BorrowSeconds float64 `json:"borrow_seconds"`
	// Counts has every state, zeros included.
	Counts   map[string]int       `json:"counts"`
	Errors   []errorGroupJSON     `json:"errors"`
	Accounts []accountSplitJSON   `json:"accounts"`
	Timing   timingJSON           `json:"timing"`
	Cost     *report.CampaignCost `json:"cost,omitempty"` // when a rate card was imported
	Dropped  []report.Dropped     `json:"dropped_accounts"`
	// Delivery is what status webhooks said, once one reported.
	Delivery *report.Delivery `json:"delivery,omitempty"`
	// ETA is status's, while something sends the campaign.
	ETA *report.ETA `json:"eta,omitempty"`
	// PutBack is the pending rows an error put back to be sent again, by
	// code; FailedStatuses the failed status webhooks, by code, with what
	// their rows are now.
	PutBack        []putBackJSON      `json:"put_back"`
	FailedStatuses []failedStatusJSON `json:"failed_statuses"`
}

type putBackJSON struct {
	Code    int        `json:"code"`
	Count   int        `json:"count"`
	NextTry *time.Time `json:"next_try,omitempty"`
	Sample  string     `json:"sample"`
}

type failedStatusJSON struct {
	Code       int `json:"code"` // 0: the webhook gave none
	Count      int `json:"count"`
	KeptFailed int `json:"kept_failed"` // the row failed after send
	PutBack    int `json:"put_back"`    // the row waits to be sent again
	SentAgain  int `json:"sent_again"`  // the row was sent again since
}

type errorGroupJSON struct {
	Code   int    `json:"code"` // 0: no Graph error code (a suppressed number)
	Count  int    `json:"count"`
	Sample string `json:"sample"`
}

type accountSplitJSON struct {
	Account   string `json:"account"`
	Sent      int    `json:"sent"`
	Failed    int    `json:"failed"`
	Unknown   int    `json:"unknown"`
	Attempts  int    `json:"attempts"`
	Throttled int    `json:"throttled"`
}

type timingJSON struct {
	FirstAttempt   *time.Time `json:"first_attempt,omitempty"`
	LastAttempt    *time.Time `json:"last_attempt,omitempty"`
	ElapsedSeconds float64    `json:"elapsed_seconds"`
	SendRate       float64    `json:"send_rate_per_second"` // sent over elapsed
	Attempts       int        `json:"attempts"`             // requests that reached the API
	NotSent        int        `json:"not_sent"`             // claims put back without a request
	ThrottleRate   float64    `json:"throttle_rate"`
	AvgAttempts    float64    `json:"avg_attempts"`
}

func toShowJSON(d readmodel.Detail) showJSON {
	c := d.Campaign
	out := showJSON{
		ID: c.ID, Name: c.Name, Source: c.Source, Kind: string(c.Spec.Kind),
		Template: c.Spec.Template, Lang: c.Spec.Lang, Params: c.Spec.Params, Text: c.Spec.Text,
		State: string(c.State), PauseReason: c.PauseReason, CreatedAt: c.CreatedAt.UTC(),
		FinishedAt: utcOrNil(c.FinishedAt), Imported: c.Imported, Skipped: c.Skipped,
		StartAt: utcOrNil(c.Schedule.StartAt), BeganAt: utcOrNil(c.BeganAt), ExpiresAt: utcOrNil(c.ExpiresAt()),
		ExpireAfterSeconds: c.Schedule.ExpireAfter.Seconds(), SendWindow: windowText(c.Schedule.Window),
		Priority: c.Share.Priority.String(), Weight: c.Share.Weight, BorrowSeconds: c.Share.Borrow.Seconds(),
		Counts: map[string]int{}, Errors: []errorGroupJSON{}, Accounts: []accountSplitJSON{}, Dropped: []report.Dropped{},
		PutBack: []putBackJSON{}, FailedStatuses: []failedStatusJSON{},
		Timing: timingJSON{
			FirstAttempt: utcOrNil(d.FirstAttempt), LastAttempt: utcOrNil(d.LastAttempt),
			ElapsedSeconds: d.Elapsed().Seconds(), SendRate: d.SendRate(),
			Attempts: d.Stats.Attempts, NotSent: d.Stats.NotSent, ThrottleRate: d.Stats.ThrottleRate(), AvgAttempts: d.Stats.AvgAttempts(),
		},
	}
	for _, s := range campaign.States {
		out.Counts[string(s)] = d.Counts[s]
	}
	for _, g := range d.Errors {
		out.Errors = append(out.Errors, errorGroupJSON{g.Code, g.Count, g.Sample})
	}
	for _, a := range d.Accounts {
		out.Accounts = append(out.Accounts, accountSplitJSON{a.Account, a.Sent, a.Failed, a.Unknown, a.Attempts, a.Throttled})
	}
	for _, x := range d.Dropped {
		out.Dropped = append(out.Dropped, report.Dropped{Account: x.Account, Reason: x.Reason, ErrorCode: x.ErrorCode, At: x.At.UTC()})
	}
	for _, g := range d.PutBack {
		out.PutBack = append(out.PutBack, putBackJSON{Code: g.Code, Count: g.Count, NextTry: utcOrNil(g.NextTry), Sample: g.Sample})
	}
	for _, g := range d.FailedStatuses {
		out.FailedStatuses = append(out.FailedStatuses, failedStatusJSON{g.Code, g.Count, g.KeptFailed, g.PutBack, g.SentAgain})
	}
	return out
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// printShow writes the terminal form: labelled blocks and aligned tables,
// times in loc.
func printShow(f *Factory, d readmodel.Detail, eta *report.ETA, loc *time.Location) error {
	c := d.Campaign
	w := f.IO.Out
	width := f.IO.TerminalWidth()
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	fmt.Fprintf(w, "Campaign %d: %s\n", c.ID, c.Name)
	kvFit(w, width, "State", string(c.State))
	if c.PauseReason != "" {
		kvFit(w, width, "Reason", oneLine(c.PauseReason))
	}
	if c.Schedule != (campaign.Schedule{}) {
		kvFit(w, width, "Schedule", scheduleText(c, when))
	}
	share := fmt.Sprintf("priority %s, weight %d", c.Share.Priority, c.Share.Weight)
	if c.Share.Priority == campaign.High {
		share += fmt.Sprintf(", borrows up to %s of an account's rate", c.Share.Borrow)
	}
	kvFit(w, width, "Share", share)
	kvFit(w, width, "Source", c.Source)
	kvFit(w, width, "Message", describeSpec(c.Spec))
	kvFit(w, width, "Created", when(c.CreatedAt))
	kvFit(w, width, "Finished", when(c.FinishedAt))
	if eta != nil {
		kvFit(w, width, "ETA", eta.Text)
	}
	kvFit(w, width, "Recipients", fmt.Sprintf("%d imported, %d skipped at import", c.Imported, c.Skipped))

	fmt.Fprintln(w, "\nMessages")
	t := newTable(f, "STATE", "COUNT")
	for _, s := range campaign.States {
		t.Row(string(s), strconv.Itoa(d.Counts[s]))
	}
	t.Row("total", strconv.Itoa(d.Counts.Total()))
	if err := t.Render(); err != nil {
		return err
	}

	if len(d.Errors) > 0 {
		fmt.Fprintln(w, "\nFailures by error code")
		t = newTable(f, "CODE", "COUNT", "SAMPLE").Truncate("SAMPLE")
		for _, g := range d.Errors {
			t.Row(codeText(g.Code), strconv.Itoa(g.Count), oneLine(g.Sample))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(d.PutBack) > 0 {
		fmt.Fprintln(w, "\nPut back to send again, by error code (pending)")
		t = newTable(f, "CODE", "COUNT", "NEXT TRY", "SAMPLE").Truncate("SAMPLE")
		for _, g := range d.PutBack {
			t.Row(codeText(g.Code), strconv.Itoa(g.Count), when(g.NextTry), oneLine(g.Sample))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(d.Accounts) > 0 {
		fmt.Fprintln(w, "\nAccounts")
		t = newTable(f, "ACCOUNT", "SENT", "FAILED", "UNKNOWN", "ATTEMPTS", "THROTTLED")
		for _, a := range d.Accounts {
			t.Row(a.Account, strconv.Itoa(a.Sent), strconv.Itoa(a.Failed), strconv.Itoa(a.Unknown),
				strconv.Itoa(a.Attempts), strconv.Itoa(a.Throttled))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	fmt.Fprintln(w, "\nTiming")
	kvFit(w, width, "First attempt", when(d.FirstAttempt))
	kvFit(w, width, "Last attempt", when(d.LastAttempt))
	kvFit(w, width, "Elapsed", d.Elapsed().Round(time.Second).String())
	rate := "- (too short a time to measure)"
	if r, ok := ui.MeasuredRate(d.Counts[campaign.Sent], d.Elapsed()); ok {
		rate = ui.FormatRate(r)
	}
	kvFit(w, width, "Send rate", rate)
	kv(w, "Requests", fmt.Sprintf("%d reached the API, %s throttled, %s per message", d.Stats.Attempts,
		flag(fmt.Sprintf("%.1f%%", d.Stats.ThrottleRate()*100), d.Stats.ThrottleRate() >= report.MaxThrottleRate, true),
		flag(fmt.Sprintf("%.2f", d.Stats.AvgAttempts()), d.Stats.AvgAttempts() >= report.MaxAvgAttempts, true)))
	if d.Stats.NotSent > 0 {
		kvFit(w, width, "Not sent", fmt.Sprintf("%d claim%s put back without a request (an account or the campaign stopped meanwhile)",
			d.Stats.NotSent, report.Plural(d.Stats.NotSent)))
	}

	if len(d.Dropped) > 0 {
		fmt.Fprintln(w, "\nDropped accounts")
		t = newTable(f, "ACCOUNT", "CODE", "SINCE", "REASON").Truncate("REASON")
		for _, x := range d.Dropped {
			t.Row(x.Account, codeText(x.ErrorCode), when(x.At), oneLine(x.Reason))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// kv writes one labelled line of a block, the values aligned.
func kv(w io.Writer, label, value string) {
	fmt.Fprintf(w, "%-14s %s\n", label+":", value)
}

// kvFit is kv on a terminal width columns wide: a value that does not fit
// wraps at spaces, its lines under the value's column (a terminal's own
// wrap would start them under the label).
func kvFit(w io.Writer, width int, label, value string) {
	fmt.Fprintln(w, wrapWords(fmt.Sprintf("%-14s ", label+":"), value, width, 15))
}

func describeSpec(s campaign.Spec) string {
	if s.Kind == campaign.KindText {
		return "text " + strconv.Quote(s.Text)
	}
	out := fmt.Sprintf("template %s (%s)", s.Template, s.Lang)
	if len(s.Params) > 0 {
		out += ", parameters " + strings.Join(s.Params, ", ")
	}
	return out
}

func codeText(code int) string {
	if code == 0 {
		return "-"
	}
	return strconv.Itoa(code)
}

func windowText(w *campaign.Window) string {
	if w == nil {
		return ""
	}
	return w.String()
}

// scheduleText says when a campaign starts, when it sends and when its
// rows expire.
func scheduleText(c campaign.Campaign, when func(time.Time) string) string {
	var parts []string
	switch {
	case !c.BeganAt.IsZero():
		parts = append(parts, "started "+when(c.BeganAt))
	case !c.Schedule.StartAt.IsZero():
		parts = append(parts, "starts "+when(c.Schedule.StartAt))
	}
	if w := c.Schedule.Window; w != nil {
		parts = append(parts, "sends "+w.String()+" in each recipient's time zone")
	}
	if d := c.Schedule.ExpireAfter; d > 0 {
		if at := c.ExpiresAt(); !at.IsZero() {
			parts = append(parts, "pending rows expire "+when(at))
		} else {
			parts = append(parts, "pending rows expire "+d.String()+" after the start")
		}
	}
	return strings.Join(parts, "; ")
}

// oneLine keeps free text (Graph error details, reasons) from breaking a
// line-oriented layout.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }), " ")
}

// printShowRecords writes the piped form: one tab-separated record per
// line, its first field naming it. Times are RFC 3339 in UTC, empty when
// unset; rates are plain numbers.
func printShowRecords(w io.Writer, d readmodel.Detail, eta *report.ETA) error {
	c := d.Campaign
	var b strings.Builder
	rec := func(fields ...string) {
		for i, s := range fields {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(oneLine(s))
		}
		b.WriteByte('\n')
	}
	rec("id", strconv.FormatInt(c.ID, 10))
	rec("name", c.Name)
	rec("source", c.Source)
	rec("kind", string(c.Spec.Kind))
	if c.Spec.Kind == campaign.KindText {
		rec("text", c.Spec.Text)
	} else {
		rec("template", c.Spec.Template)
		rec("lang", c.Spec.Lang)
		rec("params", strings.Join(c.Spec.Params, ","))
	}
	rec("state", string(c.State))
	rec("pause_reason", c.PauseReason)
	rec("created_at", rfc3339(c.CreatedAt))
	rec("finished_at", rfc3339(c.FinishedAt))
	if eta != nil {
		// finish (empty: never), seconds from now, the text status shows
		rec("eta", rfc3339(timeOrZero(eta.Finish)), strconv.FormatFloat(eta.Seconds, 'f', 0, 64), eta.Text)
	}
	rec("priority", c.Share.Priority.String())
	rec("weight", strconv.Itoa(c.Share.Weight))
	rec("borrow_seconds", strconv.FormatFloat(c.Share.Borrow.Seconds(), 'f', -1, 64))
	if sc := c.Schedule; sc != (campaign.Schedule{}) {
		rec("start_at", rfc3339(sc.StartAt))
		rec("began_at", rfc3339(c.BeganAt))
		rec("expire_after_seconds", strconv.FormatFloat(sc.ExpireAfter.Seconds(), 'f', -1, 64))
		rec("expires_at", rfc3339(c.ExpiresAt()))
		rec("send_window", windowText(sc.Window))
	}
	rec("imported", strconv.Itoa(c.Imported))
	rec("skipped", strconv.Itoa(c.Skipped))
	for _, s := range campaign.States {
		rec("count", string(s), strconv.Itoa(d.Counts[s]))
	}
	for _, g := range d.Errors {
		rec("error", strconv.Itoa(g.Code), strconv.Itoa(g.Count), g.Sample)
	}
	for _, a := range d.Accounts {
		rec("account", a.Account, strconv.Itoa(a.Sent), strconv.Itoa(a.Failed), strconv.Itoa(a.Unknown),
			strconv.Itoa(a.Attempts), strconv.Itoa(a.Throttled))
	}
	rec("first_attempt", rfc3339(d.FirstAttempt))
	rec("last_attempt", rfc3339(d.LastAttempt))
	rec("elapsed_seconds", strconv.FormatFloat(d.Elapsed().Seconds(), 'f', -1, 64))
	rec("send_rate", strconv.FormatFloat(d.SendRate(), 'f', 4, 64))
	rec("attempts", strconv.Itoa(d.Stats.Attempts))
	rec("not_sent", strconv.Itoa(d.Stats.NotSent))
	rec("throttle_rate", strconv.FormatFloat(d.Stats.ThrottleRate(), 'f', 4, 64))
	rec("avg_attempts", strconv.FormatFloat(d.Stats.AvgAttempts(), 'f', 4, 64))
	for _, x := range d.Dropped {
		rec("dropped", x.Account, strconv.Itoa(x.ErrorCode), rfc3339(x.At), x.Reason)
	}
	for _, g := range d.PutBack {
		rec("put_back", strconv.Itoa(g.Code), strconv.Itoa(g.Count), rfc3339(g.NextTry), g.Sample)
	}
	for _, g := range d.FailedStatuses {
		rec("failed_status", strconv.Itoa(g.Code), strconv.Itoa(g.Count), strconv.Itoa(g.KeptFailed), strconv.Itoa(g.PutBack), strconv.Itoa(g.SentAgain))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rfc3339 formats t in UTC for machines; "" when unset.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
