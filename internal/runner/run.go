package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/logging"
	"github.com/wasend/wasend/internal/metrics"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// The errors a run stops early with, besides campaign's ErrPaused,
// ErrCancelled and ErrNoUsableAccount: the caller's exit code and hints
// tell them apart.
var (
	ErrCapped      = dispatch.ErrCapped      // every account at its daily cap (--stop-when-capped)
	ErrOutage      = dispatch.ErrOutage      // the Cloud API answered no account for the outage timeout
	ErrRescheduled = dispatch.ErrRescheduled // what is left waits longer than a run waits
)

// ReachError: the run stopped at a portfolio's messaging limit.
type ReachError = dispatch.ReachError

// Policy is how a campaign is sent, from the sending flags to the engine.
type Policy = dispatch.Policy

// DefaultPolicy is the policy the sending flags start from.
func DefaultPolicy() Policy { return dispatch.DefaultPolicy() }

// Run carries out `campaign run` whole: it serves the webhook receiver
// when asked (and the sandbox), checks the template and that an account is
// enabled, prepares the campaign (importing the file, after the preflight
// of the accounts), then sends it with metrics, logs and the outage probe.
// Setup errors come back with a zero Result. Once the engine ran,
// Result.Ran is set and the error is Send's: the caller says how the
// campaign stopped.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	hooks, sandboxOpts, err := startRunWebhooks(ctx, o)
	if err != nil {
		return Result{}, err
	}
	if o.API.Sandbox && !o.IgnoreWindow {
		// The built-in sandbox refuses free-form text outside the window
		// (131047), as Meta does, starting from the windows wasend knows
		// of; --ignore-window says they are kept elsewhere.
		sandboxOpts.ServiceWindow = true
		if sandboxOpts.Wrote, err = readmodel.New(o.Store).WroteSince(ctx, o.Now().Add(-campaign.ServiceWindow)); err != nil {
			if hooks != nil {
				hooks.Stop()
			}
			return Result{}, err
		}
	}
	api, err := OpenAPI(ctx, o.Store, o.API, sandboxOpts)
	if err != nil {
		if hooks != nil {
			hooks.Stop()
		}
		return Result{}, err
	}
	stopSandbox := api.Close
	if hooks != nil {
		// The sandbox posts its last statuses before the receiver stops.
		defer func() { stopSandbox(); hooks.Stop() }()
	}
	defer stopSandbox()
	if api.Sandbox {
		o.IO.Warnf("SANDBOX (%s): nothing goes to WhatsApp", api.BaseURL)
		// Its templates are the sandbox's: read them as template sync
		// would, so the run's template is checked like a real one.
		reads, err := WABAReads(ctx, o.Store, "", "")
		if err != nil {
			return Result{}, err
		}
		if err := SyncTemplates(ctx, o.Store, o.IO, api, reads, o.Timeout, o.Now); err != nil {
			return Result{}, err
		}
	}
	if o.ResumeID == 0 {
		if err := CheckTemplate(ctx, o.Store, o.IO, o.Spec); err != nil {
			return Result{}, err
		}
		if err := CheckTTL(ctx, o.Store, o.SendAPI, o.Spec, o.TTL); err != nil {
			return Result{}, err
		}
	} else if !o.TemplateChecked {
		if err := CheckResumedTemplate(ctx, o.Store, o.IO, o.ResumeID); err != nil {
			return Result{}, err
		}
	}
	if err := CheckEnabled(ctx, o.Store); err != nil {
		return Result{}, err
	}

	client := api.Client(o.Timeout)
	// Runs before the sandbox's stop (deferred earlier), so its shutdown
	// doesn't wait on our idle connections.
	defer client.CloseIdleConnections()
	o.Sender, o.Token = client, api.Token
	o.Policy.LongWait = rescheduledWait // rows a 131049 webhook put off a day end the run
	if api.Sandbox {
		o.Label = "SANDBOX"
	}
	// Under --limits the shared suppression list and settings are copied in
	// before the import screens the file, and while the campaign sends.
	if o.OpenShared != nil {
		shared, closeShared, err := o.OpenShared(ctx)
		if err != nil {
			return Result{}, err
		}
		defer closeShared()
		if shared != nil {
			if err := shared.Pull(ctx); err != nil {
				o.IO.Warnf("shared suppression list and settings: %v; going on with this database's copy", err)
			}
			o.Shared = shared
		}
	}
	// The preflight comes before a file is imported, so that a failed
	// one leaves nothing behind; a campaign found without importing is
	// checked once found, when it is to send.
	var (
		checks  []AccountCheck
		checked bool
	)
	o.Preflight = func(ctx context.Context) error {
		var err error
		checks, err = preflight(ctx, o, client, api.BaseURL, api.Token)
		checked = true
		return err
	}
	res, err := Prepare(ctx, o)
	if err != nil {
		return Result{}, err
	}
	c := res.Campaign
	if err := WriteSkipReport(ctx, o.Store, o.Report, res); err != nil {
		return Result{}, err
	}
	ReportPrepared(o.IO, res, o.Flags, o.Display)
	if res.Repeat || c.State == campaign.CampaignFinished {
		counts, err := o.Store.Counts(ctx, c.ID)
		if err != nil {
			return Result{}, err
		}
		if counts.Open() == 0 {
			res.Counts, res.Done = counts, true
			return res, nil
		}
	}
	if c.State == campaign.CampaignRunning || c.State == campaign.CampaignFinished {
		// About to claim: check the API and the accounts first. (A paused or
		// cancelled campaign sends nothing; Send says why.)
		if !checked {
			if err := o.Preflight(ctx); err != nil {
				return Result{}, err
			}
		}
		back, err := ApplyChecks(ctx, o.Store, c.ID, checks, time.Now())
		if err != nil {
			return Result{}, err
		}
		for _, name := range back {
			o.IO.Infof("account %s passed the check and sends for campaign %d again", name, c.ID)
		}
		o.Probe = outageProbe(client, checks, api.Token)
	}
	m := metrics.New(o.Store)
	m.Watch(c.ID)
	if hooks != nil {
		if err := hooks.metrics.Register(m.Registerer()); err != nil {
			return Result{}, fmt.Errorf("webhook metrics: %w", err)
		}
	}
	if o.MetricsAddr != "" {
		addr, stop, err := m.Serve(ctx, o.MetricsAddr)
		if err != nil {
			return Result{}, fmt.Errorf("metrics: %w", err)
		}
		defer stop()
		o.IO.Infof("metrics on http://%s/metrics", addr)
	}
	logEvent := logging.Observer(o.Logger, c.ID, func() time.Time {
		if o.Clock != nil {
			return o.Clock.Now()
		}
		return time.Now()
	})
	observe := o.Observe
	o.Observe = func(ev dispatch.Event) {
		m.Observe(ev)
		logEvent(ev)
		if observe != nil {
			observe(ev)
		}
	}
	if hooks != nil {
		// Once the engine stops, no status webhook may change the counts
		// its last progress line and the caller's summary both show.
		o.Drain = sync.OnceFunc(func() {
			stopSandbox()
			if err := hooks.Stop(); err != nil {
				o.IO.Warnf("webhooks: %v", err)
			}
		})
	}
	if err := applyBudget(ctx, o, c); err != nil {
		return Result{}, err
	}
	runErr := budgetStopped(ctx, o, c.ID, Send(ctx, o, c))
	if o.Drain != nil {
		o.Drain() // when Send returned before its engine ran
	}
	counts, err := o.Store.Counts(context.WithoutCancel(ctx), c.ID)
	if err != nil {
		return Result{}, errors.Join(runErr, err)
	}
	res.Counts, res.Ran = counts, true
	return res, runErr
}

// WriteSkipReport writes the --report file at path: the skipped rows of
// the file just imported (or of the campaign's last import), read back
// from the store so that none are held in memory while importing.
func WriteSkipReport(ctx context.Context, st driver.Driver, path string, res Result) error {
	if path == "" || res.Campaign.ID == 0 || (res.Repeat && !res.Imported) {
		return nil
	}
	skipped, err := readmodel.New(st).Skipped(ctx, res.Campaign.ID)
	if err != nil {
		return err
	}
	return WriteReport(path, skipped)
}

// ReportPrepared says on io what Prepare did with the file: a new
// campaign, rows added to an unfinished one (each after the column its
// numbers were read from), the same campaign found again, or a finished
// one that already sent this message to these recipients. flags ends the command lines it suggests; times are shown
// in display (nil: local time).
func ReportPrepared(io *ui.IOStreams, res Result, flags string, display *time.Location) {
	if display == nil {
		display = time.Local
	}
	c := res.Campaign
	if (res.Imported || res.Continued) && res.Phone.Name != "" {
		io.Infof("phone column: %s", res.Phone)
	}
	switch {
	case res.Imported:
		io.Infof("campaign %d %q: imported %d recipients%s, skipped %d%s", c.ID, c.Name, c.Imported, importedFrom(c), c.Skipped, elsewhere(res))
	case res.Continued:
		noun := "recipients"
		if res.Added == 1 {
			noun = "recipient"
		}
		io.Infof("continuing campaign %d %q: %d new %s added, %d already there, skipped %d", c.ID, c.Name,
			res.Added, noun, res.Already, c.Skipped)
	case res.Repeat && c.State == campaign.CampaignCancelled:
		return // sending it says that it was cancelled
	case res.Repeat:
		io.Warnf("campaign %d %q already sent this message to these recipients (finished %s); nothing is sent again. To send it again anyway, add --again.",
			c.ID, c.Name, c.FinishedAt.In(display).Format("2006-01-02 15:04"))
		return
	default:
		io.Infof("continuing campaign %d %q (imported %s)", c.ID, c.Name, c.CreatedAt.In(display).Format("2006-01-02 15:04"))
		return
	}
	for i, s := range res.Skipped {
		if i == MaxListedSkips {
			break
		}
		io.Infof("  line %d: %s: %s", s.Line, QuoteInput(s.Input), s.Reason)
	}
	if c.Skipped > len(res.Skipped) {
		io.Infof("  … and %d more (see `wasend campaign skipped %d%s`)", c.Skipped-len(res.Skipped), c.ID, flags)
	}
}

// QuoteInput is a file's cell as a skipped row's line shows it.
func QuoteInput(s string) string {
	if s == "" {
		return `""`
	}
	return strconv.Quote(s)
}

// elsewhere notes the rows --shard left to other hosts.
func elsewhere(res Result) string {
	if res.Elsewhere == 0 {
		return ""
	}
	return fmt.Sprintf("; %d rows are other shards'", res.Elsewhere)
}

// importedFrom names the file a campaign came from, unless its name already
// does (the default name is the file's): a full path makes the line wrap.
func importedFrom(c campaign.Campaign) string {
	if filepath.Base(c.Source) == c.Name {
		return ""
	}
	return " from " + c.Source
}
