package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
)

func newCampaignCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "campaign",
		Short: "Run, list and retry campaigns",
	}
	cmd.AddCommand(newCampaignRunCmd(f), newCampaignImportCmd(f), newCampaignCheckCmd(f), newCampaignPreviewCmd(f), newCampaignListCmd(f), newCampaignSkippedCmd(f), newCampaignFailedCmd(f),
		newCampaignShowCmd(f), newCampaignExportCmd(f),
		newCampaignPlanCmd(f),
		newCampaignRetryCmd(f), newCampaignResumeCmd(f),
		newCampaignPauseCmd(f), newCampaignCancelCmd(f), newCampaignDeleteCmd(f), newCampaignRenameCmd(f), newCampaignSetCmd(f))
	return cmd
}

type runOptions struct {
	File                string
	Name                string
	Template            string
	Lang                string
	Params              []string
	Text                string
	Region              string
	Delimiter           string
	PhoneColumn         string
	UserIDColumn        string // --user-id-column
	Report              string
	SkipContactedWithin time.Duration
	Again               bool
	IgnoreWindow        bool   // --ignore-window
	Shard               string // --shard K/N
	Resume              int64
	templateChecked     bool          // campaign resume checked the template before unpausing
	Policy              runner.Policy // the sending flags
	PairGap             time.Duration // stored with the campaign; the claims keep it
	Timeout             time.Duration
	MetricsAddr         string
	WebhookAddr         string
	WebhookPath         string
	NoReschedule        bool
	Progress            string        // --progress: auto, text or json
	MaxCost             string        // --max-cost: "" keeps the campaign's budget
	API                 string        // --api: cloud, marketing or auto ("": each account's)
	TTL                 time.Duration // --ttl: 0 keeps the campaign's
	MaxHeld             int           // --max-held
	templateOptions
	scheduleOptions
	shareOptions
	fromOptions
}

func newCampaignRunCmd(f *Factory) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT)",
		Short: "Import a recipient file and send it, or continue where it stopped",
		Long: `Import FILE.csv into a new campaign and send a message to every recipient,
across all enabled accounts, within each account's rate, burst and daily cap.

The file needs a "phone" column. Numbers are normalised to E.164 (--region
gives the country of national numbers); rows with an invalid number, a missing
parameter, a number listed earlier, a suppressed number, or one that got the
same template in the last 24 h are skipped and reported with their line number.

A campaign is its message and its recipients, however the file is read:
running the same list again continues its unfinished campaign (an edited list
adds its new numbers; nobody is messaged twice), and a finished one is not
sent again. --again makes a separate campaign and sends to everyone on the
list, also to those who got this template in the last 24 h (a new --name
alone makes a separate campaign that skips them). Ctrl-C stops after the
requests in flight; a message whose answer was lost is marked unknown and not
resent automatically (see ` + "`wasend campaign retry --unknown`" + `).

--from ID --segment SEGMENT takes the recipients from campaign ID's rows
instead of a file (retargeting): not-delivered, delivered-not-read, read,
replied, not-replied or failed:CODE, read once, screened as a file's.

A --text message goes only to recipients who wrote within 24 h (Meta's
customer service window); the others are skipped, at import and again just
before sending. --ignore-window sends to them anyway.

With --sandbox nothing leaves the machine: a built-in stand-in for the Cloud
API answers, three demo accounts send, and the demo template is used.`,
		Example: `  wasend campaign run promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign run news.csv --text "Hi {{name}}, the shop opens at 9."
  wasend campaign run --resume 3
  wasend campaign run --from 3 --segment delivered-not-read \
      --template reminder --lang en_US
  wasend campaign run --sandbox testdata/recipients.csv`,
		Annotations: map[string]string{annotationSends: "yes"},
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Resume != 0 {
				if len(args) > 0 {
					return usagef("campaign run --resume %d: %q is not expected with --resume (the campaign's recipients are in the database); "+
						"to send a file as a new campaign, leave out --resume", o.Resume, args[0])
				}
				return nil
			}
			return fileOrFrom(&o.fromOptions)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			return campaignRun(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "", "campaign name (default: the file name)")
	addMessageFlags(fl, &o)
	addReadFlags(fl, &o)
	fl.Int64Var(&o.Resume, "resume", 0, "continue campaign `ID` instead of importing a file")
	addFromFlags(fl, &o.fromOptions)
	addScheduleFlags(fl, &o.scheduleOptions)
	addShareFlags(fl, &o.shareOptions)
	addSendFlags(cmd, &o)
	return cmd
}

// addMessageFlags adds the flags that say what to send, shared by run,
// check and preview.
func addMessageFlags(fl *pflag.FlagSet, o *runOptions) {
	fl.StringVar(&o.Template, "template", "", "approved template name")
	fl.StringVar(&o.Lang, "lang", "", "template language code, e.g. en_US")
	fl.StringSliceVar(&o.Params, "params", nil, "columns that fill the template body's {{1}}, {{2}}, … in order")
	fl.StringVar(&o.Text, "text", "", "send this text instead of a template; {{column}} is replaced per row")
	fl.BoolVar(&o.IgnoreWindow, "ignore-window", false, "with --text: send also to recipients who wrote nothing in the last 24 h (no customer service window; Meta refuses those, 131047)")
	addTemplateFlags(fl, o)
}

// addSendFlags adds the flags that shape sending, shared by run and resume.
// addAPIFlag is --api, on run and on check (which refuses there what run
// would refuse before sending).
func addAPIFlag(fl *pflag.FlagSet, o *runOptions) {
	fl.StringVar(&o.API, "api", "", "the endpoint templates go through: cloud (/messages), marketing (the Marketing Messages API, marketing templates only) or auto (marketing templates through it from onboarded WABAs); default: each account's (account set --api), else cloud")
	fl.DurationVar(&o.TTL, "ttl", 0, "the messages' time-to-live, within Meta's range for the template's category (marketing 12h–720h, through the Marketing Messages API only; utility 30s–12h; authentication 30s–15m); kept with the campaign")
}

// parseSendAPI reads --api as given: "" (not given) lets each account send as its
// own (account set --api).
func parseSendAPI(s string) (campaign.API, error) {
	if s == "" {
		return "", nil
	}
	return campaign.ParseAPI(s)
}

func addSendFlags(cmd *cobra.Command, o *runOptions) {
	fl := cmd.Flags()
	p, d := &o.Policy, runner.DefaultPolicy()
	addAPIFlag(fl, o)
	fl.BoolVar(&p.StopWhenCapped, "stop-when-capped", d.StopWhenCapped, "exit (code 3) instead of waiting when every account reached its daily cap")
	fl.IntVar(&o.MaxHeld, "max-held", campaign.DefaultMaxHeld, "stop adding sends while this many of the campaign's are held by Meta for quality assessment (template pacing), until statuses settle them; 0 never stops")
	fl.DurationVar(&o.PairGap, "pair-gap", campaign.DefaultPairGap, "least time between two messages to one person from any of our numbers (Meta's pair limit, 131056)")
	fl.IntVar(&p.Workers, "workers", d.Workers, "requests in flight at most; within it wasend keeps as many as the accounts' rate times the answers' latency needs")
	fl.IntVar(&p.MaxAttempts, "max-attempts", d.MaxAttempts, "attempts of a row on transient errors before it fails")
	fl.DurationVar(&p.BackoffBase, "backoff-base", d.BackoffBase, "first retry delay ceiling (full jitter, doubling)")
	fl.DurationVar(&p.BackoffMax, "backoff-max", d.BackoffMax, "largest retry delay ceiling")
	fl.DurationVar(&o.Timeout, "timeout", 20*time.Second, "per-request timeout; a request that times out is marked unknown")
	fl.DurationVar(&p.Cooldown, "cooldown", d.Cooldown, "rest of an account throttled on every request for a second (a block, not a rate); repeats grow it up to 4×")
	fl.DurationVar(&p.Restriction, "restriction-pause", d.Restriction, "stop of an account after a spam or messaging-limit restriction (131048, 131064)")
	fl.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while sending, e.g. 127.0.0.1:9464")
	fl.Float64Var(&p.ErrorPauseRatio, "error-pause-ratio", d.ErrorPauseRatio, "pause when more than this share of the last 100 attempts failed permanently (0: never)")
	fl.DurationVar(&p.OutageTimeout, "outage-timeout", d.OutageTimeout, "pause (exit 6) when the Cloud API answers no account for this long; until then wasend waits and retries, failing nothing")
	fl.StringVar(&o.WebhookAddr, "webhook-addr", "", "also receive Meta's status webhooks on this address while sending, e.g. :8080 (see wasend webhook serve)")
	fl.StringVar(&o.WebhookPath, "webhook-path", "/webhook", "URL path of --webhook-addr")
	fl.BoolVar(&o.NoReschedule, "no-reschedule", false, "with webhooks: fail messages Meta did not deliver for the per-user marketing limit (131049) instead of sending them again 24 h later")
	fl.StringVar(&o.MaxCost, "max-cost", "", "stop (exit 8) before the next message would take the campaign's cost past `AMOUNT`, e.g. 150 or 150EUR, by the rate card in force (wasend pricing import); kept with the campaign, 0 removes it")
	fl.StringVar(&o.Progress, "progress", "auto", "progress on stderr: text, or json (a status object a second, a summary at the end); auto is json when stderr is not a terminal and --log-format is json, else text")
}

// spec checks the message flags and builds the campaign's message spec.
func (o runOptions) spec(sandboxMode bool) (campaign.Spec, error) {
	if o.Text != "" {
		if o.Template != "" || len(o.Params) > 0 {
			return campaign.Spec{}, usagef("--text excludes --template and --params")
		}
		if o.templateOptions.set() {
			return campaign.Spec{}, usagef("--text excludes the template flags --named-params, --header-* and --button-param")
		}
		return campaign.Spec{Kind: campaign.KindText, Text: o.Text}, nil
	}
	s := campaign.Spec{Kind: campaign.KindTemplate, Template: o.Template, Lang: o.Lang, Params: o.Params}
	if sandboxMode && s.Template == "" {
		s.Template, s.Lang = sandbox.DemoTemplate, "en_US"
		if s.Params == nil {
			s.Params = []string{"name", "code"}
		}
	}
	if s.Template == "" {
		return s, usagef("--template NAME (or --text) is required")
	}
	if s.Lang == "" {
		return s, usagef("--lang CODE is required with --template, e.g. --lang en_US")
	}
	if err := o.templateOptions.apply(&s); err != nil {
		return s, err
	}
	return s, nil
}

// checkName refuses a --name that can't name a campaign, before any work.
func (o runOptions) checkName() error {
	if o.Name == "" {
		return nil
	}
	if err := campaign.ValidateName(o.Name); err != nil {
		return usageError{fmt.Errorf("--name: %w", err)}
	}
	return nil
}

func campaignRun(ctx context.Context, f *Factory, o runOptions) error {
	if err := o.checkName(); err != nil {
		return err
	}
	ro, err := o.readOptions(f)
	if err != nil {
		return err
	}
	if o.Policy.ErrorPauseRatio < 0 || o.Policy.ErrorPauseRatio > 1 {
		return usagef("--error-pause-ratio %v: must be between 0 and 1", o.Policy.ErrorPauseRatio)
	}
	if o.Policy.Workers < 1 {
		return usagef("--workers %d: must be at least 1", o.Policy.Workers)
	}
	if o.Policy.OutageTimeout <= 0 {
		return usagef("--outage-timeout %v: must be positive", o.Policy.OutageTimeout)
	}
	if o.PairGap < 0 {
		return usagef("--pair-gap %v: must not be negative", o.PairGap)
	}
	sendAPI, err := parseSendAPI(o.API)
	if err != nil {
		return usageError{err}
	}
	if o.MaxHeld < 0 {
		return usagef("--max-held %d: must not be negative (0 never stops)", o.MaxHeld)
	}
	progJSON, err := progressJSON(f, o.Progress)
	if err != nil {
		return err
	}
	spec, err := o.spec(f.Sandbox)
	if err != nil && o.Resume == 0 {
		return err
	}
	seg, _, err := o.segment()
	if err != nil {
		return err
	}
	if o.Resume != 0 && o.From != 0 {
		return usagef("--resume and --from both say which recipients: give one")
	}
	sched, err := o.schedule(f)
	if err != nil {
		return err
	}
	share, err := o.change()
	if err != nil {
		return err
	}
	logger, err := f.Logger()
	if err != nil {
		return err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var maxCost *runner.MaxCost
	if o.MaxCost != "" {
		m, err := runner.ParseMaxCost(o.MaxCost)
		if err != nil {
			return usagef("--max-cost: %v", err)
		}
		maxCost = &m
	}
	opts := runner.Options{
		Store: st, IO: f.IO, File: o.File, Name: o.Name, Spec: spec, ResumeID: o.Resume, Location: st.Location(),
		MaxCost: maxCost,
		From:    o.From, Segment: seg,
		Flags:    dbHint(f),
		Schedule: sched, Share: share,
		Region: ro.Region, Delimiter: ro.Delimiter, PhoneColumn: ro.PhoneColumn, SkipContactedWithin: ro.SkipContactedWithin,
		Again: ro.Again, Shard: ro.Shard, IgnoreWindow: ro.IgnoreWindow,
		Policy: o.Policy, PairGap: o.PairGap, SendAPI: sendAPI, TTL: o.TTL, MaxHeld: o.MaxHeld,
		API: f.apiConfig(), Timeout: o.Timeout, TemplateChecked: o.templateChecked, Report: o.Report,
		MetricsAddr: o.MetricsAddr, Webhooks: runWebhooks(f, o),
		OpenShared: func(ctx context.Context) (runner.SharedSync, func(), error) {
			hs, closeSync, err := f.hostSync(ctx, st)
			if hs == nil {
				return nil, closeSync, err
			}
			return hs, closeSync, err
		},
		Logger: logger, Now: f.Now, Display: f.location(), ProgressJSON: progJSON,
	}
	res, runErr := runner.Run(ctx, opts)
	if errors.Is(runErr, runner.ErrNoWABA) {
		return usageError{runErr}
	}
	c, counts := res.Campaign, res.Counts
	switch {
	case res.Done:
		printSummary(f, c, counts, "already finished")
		return nil
	case !res.Ran:
		return runErr
	}
	runErr = printRunEnd(f, c, counts, runErr, st.Location())
	if opts.Webhooks != nil {
		reportDelivery(context.WithoutCancel(ctx), f, st, c.ID)
	}
	if f.Sandbox {
		f.IO.Warnf("SANDBOX: nothing was sent to WhatsApp")
		f.IO.Infof("See it with: wasend status%s\nor: wasend campaign show %d%s", dbHint(f), c.ID, dbHint(f))
	}
	return runErr
}

// dbHint is the global flags a hinted command line needs to reach the same
// state as this one (hint.Flags: --db, --sandbox and --limits as given).
func dbHint(f *Factory) string {
	return hint.Flags{DB: runner.RedactDB(f.DBPath), Sandbox: f.Sandbox, Limits: f.Limits}.String()
}

// quoteInput is a file's cell as a skipped row's line shows it.
var quoteInput = runner.QuoteInput

// printRunEnd says how a run of c ended:
// the summary on stdout, what to do next on stderr, each line within 80
// columns but for a command's flags, and a command on a line of its own
// so it pastes whole. It returns runErr, nil for an end that is not a
// failure (done for now). quotaZone is the zone of quota days.
func printRunEnd(f *Factory, c campaign.Campaign, counts campaign.Counts, runErr error, quotaZone *time.Location) error {
	db := dbHint(f)
	switch {
	case runErr == nil:
		printSummary(f, c, counts, "finished")
	case errors.Is(runErr, context.Canceled):
		printSummary(f, c, counts, "interrupted")
		f.IO.Infof("To continue, run the same command again, or:\n  wasend campaign run --resume %d%s", c.ID, db)
	case errors.Is(runErr, campaign.ErrPaused):
		printSummary(f, c, counts, "paused")
		f.IO.Infof("See why with: wasend status%s\nafter fixing it: wasend campaign resume %d%s", db, c.ID, db)
	case errors.Is(runErr, campaign.ErrCancelled):
		printSummary(f, c, counts, "cancelled")
	case errors.Is(runErr, driver.ErrStorage):
		printSummary(f, c, counts, "stopped")
		f.IO.Infof("The database could not be written; what was recorded is kept.\nOnce it is fixed, run the same command again to continue.")
	case errors.As(runErr, new(*runner.ReachError)):
		printSummary(f, c, counts, "stopped at the reach cap")
		f.IO.Infof("The portfolio's messaging limit is used up. It continues once recipients\nleave the 24 h window (wasend portfolio list%s) with:\n  wasend campaign run --resume %d%s", db, c.ID, db)
	case errors.Is(runErr, runner.ErrRescheduled):
		printSummary(f, c, counts, "done for now")
		until := strings.TrimPrefix(runErr.Error(), runner.ErrRescheduled.Error())
		if until == runErr.Error() {
			until = ": " + until
		}
		f.IO.Infof("%d message(s) wait to be sent again%s\nthen run: wasend campaign run --resume %d%s", counts[campaign.Pending], until, c.ID, db)
		runErr = nil
	case errors.Is(runErr, runner.ErrCapped):
		printSummary(f, c, counts, "stopped at the daily caps")
		// campaign.CappedHint's advice, a clause a line: the quota days'
		// zone, as cron's reset.
		f.IO.Infof("every account reached its daily cap; next quota day from %s\n(when cron's `wasend quota reset` runs), or now with:\n  wasend quota reset --force%s\nThen continue with: wasend campaign run --resume %d%s",
			campaign.NextQuotaDay(f.Now(), quotaZone).Format("01-02 15:04 MST"), db, c.ID, db)
	}
	return runErr
}

// printSummary is a run's result: its first line names the campaign, how
// it ended, its recipients, sent and failed; the second the rest. Each
// fits 80 columns for counts under 100 000.
func printSummary(f *Factory, c campaign.Campaign, n campaign.Counts, how string) {
	fmt.Fprintf(f.IO.Out, "campaign %d %s: %d recipients, sent %d, failed %d\n  unknown %d, pending %d, skipped at import %d\n",
		c.ID, how, n.Total(), n[campaign.Sent], n[campaign.Failed], n[campaign.Unknown], n.Open(), c.Skipped)
	if n[campaign.Unknown] > 0 {
		f.IO.Infof("%d message(s) may or may not have been delivered: not resent automatically.\nTo resend them: wasend campaign retry %d --unknown%s",
			n[campaign.Unknown], c.ID, dbHint(f))
	}
	if n[campaign.Expired] > 0 {
		f.IO.Infof("%d message(s) expired: not sent within %s of the start (--expire-after)",
			n[campaign.Expired], c.Schedule.ExpireAfter)
	}
}

func newCampaignListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List campaigns with their counts",
		Long: `List every campaign in the database by number, with its state, counts by
message state, health figures and ETA — the campaign half of ` + "`wasend status`" + `.`,
		Example: `  wasend campaign list
  wasend campaign list --json | jq '.[] | {id, state, sent, pending}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return f.withStore(ctx, func(st driver.Driver) error {
				out, err := f.reporter(st).Campaigns(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return f.IO.JSON(out)
				}
				return printCampaigns(f, out)
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("campaign ID %q: must be a positive number (see `wasend campaign list`)", s)
	}
	return id, nil
}

func newCampaignRetryCmd(f *Factory) *cobra.Command {
	var (
		unknown, allFailed bool
		codes              []int
		undelivered        bool
		olderThan          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "retry ID (--unknown | --all-failed | --code CODE... | --undelivered [--older-than D])",
		Short: "Queue unknown or failed messages to be sent again",
		Long: `Queue messages of campaign ID to be sent again on its next run, with a fresh
retry budget.

--unknown: messages whose request may have reached WhatsApp but whose answer
was lost. Resending may deliver a duplicate; that is your decision to make.
--all-failed: every failed message (see ` + "`wasend campaign failed ID`" + `).
--code C: failed messages whose last error was Graph error C (repeatable);
-1 selects those failed because their number is on the suppression list.
--undelivered: sent messages that no status webhook reported delivered or
read, sent more than --older-than ago (default 24h): a resend to people whose
phone never got it. Delivered and read messages are never queued again.`,
		Example: `  wasend campaign retry 3 --unknown && wasend campaign run --resume 3
  wasend campaign retry 3 --code 131000 --code 131016`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			if !unknown && !allFailed && len(codes) == 0 && !undelivered {
				return usagef("say which rows: --unknown, --all-failed, --code CODE or --undelivered")
			}
			if cmd.Flags().Changed("older-than") && !undelivered {
				return usagef("--older-than goes with --undelivered")
			}
			if olderThan < 0 {
				return usagef("--older-than %s: must not be negative", olderThan)
			}
			if allFailed && len(codes) > 0 {
				return usagef("--all-failed already includes every --code")
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				if _, err := st.Campaign(cmd.Context(), id); err != nil {
					return err
				}
				if unknown {
					n, err := st.RequeueUnknown(cmd.Context(), id)
					if err != nil {
						return err
					}
					fmt.Fprintf(f.IO.Out, "campaign %d: %d unknown message(s) queued again\n", id, n)
				}
				if allFailed || len(codes) > 0 {
					n, err := st.RequeueFailed(cmd.Context(), id, codes)
					if err != nil {
						return err
					}
					fmt.Fprintf(f.IO.Out, "campaign %d: %d failed message(s) queued again\n", id, n)
				}
				if undelivered {
					n, err := st.RequeueUndelivered(cmd.Context(), id, f.Now().Add(-olderThan))
					if err != nil {
						return err
					}
					fmt.Fprintf(f.IO.Out, "campaign %d: %d sent but undelivered message(s) queued again\n", id, n)
				}
				f.IO.Infof("send them with: wasend campaign run --resume %d%s", id, dbHint(f))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&unknown, "unknown", false, "messages whose outcome is unknown")
	cmd.Flags().BoolVar(&allFailed, "all-failed", false, "every failed message")
	cmd.Flags().IntSliceVar(&codes, "code", nil, "failed messages with this Graph error code, or -1: suppressed, -3: no customer service window (repeatable)")
	cmd.Flags().BoolVar(&undelivered, "undelivered", false, "sent messages no webhook reported delivered or read")
	cmd.Flags().DurationVar(&olderThan, "older-than", 24*time.Hour, "with --undelivered: only messages sent longer ago than this")
	return cmd
}

func newCampaignResumeCmd(f *Factory) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Unpause a paused campaign and continue sending it",
		Long: `Unpause campaign ID — paused by a template or campaign-fatal error, by too many
permanent failures, or because every account failed for it — and run it. The
accounts dropped from the campaign get another chance: fix their tokens or
permissions first. Takes the same sending flags as ` + "`campaign run`" + `.`,
		Example:     `  wasend campaign resume 3`,
		Annotations: map[string]string{annotationSends: "yes"},
		Args:        exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			o.Resume = id
			return campaignResume(cmd.Context(), f, o)
		},
	}
	addSendFlags(cmd, &o)
	return cmd
}

// campaignResume unpauses campaign o.Resume and runs it.
func campaignResume(ctx context.Context, f *Factory, o runOptions) error {
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	// A template paused or edited since the import stays paused.
	if err := runner.CheckResumedTemplate(ctx, st, f.IO, o.Resume); err != nil {
		st.Close()
		return err
	}
	o.templateChecked = true
	reason, err := st.ResumeCampaign(ctx, o.Resume)
	st.Close()
	if err != nil {
		return err
	}
	if reason != "" {
		f.IO.Infof("campaign %d unpaused (was: %s)", o.Resume, reason)
	}
	return campaignRun(ctx, f, o)
}

func newCampaignFailedCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "failed ID",
		Short: "List a campaign's failed messages (the dead-letter list)",
		Long: `List every failed message of campaign ID: its line and number, the Graph error
code and reason, the attempts made, the account used and when. Rows that gave
up after repeated transient errors say "gave up after N attempts". Queue them
again with ` + "`wasend campaign retry ID --all-failed`" + ` or ` + "`--code CODE`" + `.`,
		Example: `  wasend campaign failed 3
  wasend campaign failed 3 --json |
      jq -r '.[] | select(.error_code == 131026) | .phone'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			id := c.ID
			rows, err := readmodel.New(st).FailedMessages(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				type failedJSON struct {
					Line        int       `json:"line"`
					Input       string    `json:"input"`
					Phone       string    `json:"phone"`
					ErrorCode   int       `json:"error_code"`
					Reason      string    `json:"reason"`
					Attempts    int       `json:"attempts"`
					Account     string    `json:"account"`
					LastAttempt time.Time `json:"last_attempt"`
					GaveUp      bool      `json:"gave_up"`
				}
				out := []failedJSON{}
				for _, r := range rows {
					out = append(out, failedJSON{r.Line, r.Input, r.Phone, r.ErrorCode, r.Error, r.Attempts, r.Account, r.LastAttempt.UTC(), r.GaveUp})
				}
				return f.IO.JSON(out)
			}
			t := newTable(f, "LINE", "PHONE", "CODE", "REASON", "ATTEMPTS", "ACCOUNT", "LAST ATTEMPT").
				Truncate("REASON", "ACCOUNT").Optional("LAST ATTEMPT", "ATTEMPTS", "ACCOUNT")
			for _, r := range rows {
				code := ""
				if r.ErrorCode != 0 {
					code = strconv.Itoa(r.ErrorCode)
				}
				last := ""
				if !r.LastAttempt.IsZero() {
					last = r.LastAttempt.In(f.location()).Format("2006-01-02 15:04:05")
				}
				t.Row(strconv.Itoa(r.Line), r.Phone, code, r.Error, strconv.Itoa(r.Attempts), r.Account, last)
			}
			if len(rows) == 0 && f.IO.IsStdoutTTY() {
				fmt.Fprintf(f.IO.Out, "campaign %d has no failed messages\n", id)
			}
			return t.Render()
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newCampaignSkippedCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "skipped ID",
		Short: "List the rows of a campaign's file that were not imported, and why",
		Long: `List every row of campaign ID's recipient file that was not imported: an
invalid number, a missing parameter, a duplicate, a suppressed number. Lines
are the file's own, counting the header as line 1.`,
		Example: `  wasend campaign skipped 3
  wasend campaign skipped 3 --json |
      jq -r '.[] | select(.reason | startswith("duplicate")) | .line'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, c, err := f.openCampaign(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			id := c.ID
			rows, err := readmodel.New(st).Skipped(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				type skippedJSON struct {
					Line   int    `json:"line"`
					Input  string `json:"input"`
					Reason string `json:"reason"`
				}
				out := []skippedJSON{}
				for _, r := range rows {
					out = append(out, skippedJSON{r.Line, r.Input, r.Reason})
				}
				return f.IO.JSON(out)
			}
			t := newTable(f, "LINE", "INPUT", "REASON").Truncate("INPUT", "REASON")
			for _, r := range rows {
				t.Row(strconv.Itoa(r.Line), r.Input, r.Reason)
			}
			return t.Render()
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}
