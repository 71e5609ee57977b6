// Package runner carries out `wasend campaign run` (Run): it serves the
// run's webhook receiver and the sandbox, checks the template and the
// accounts, imports a recipient file into a campaign (or finds the
// campaign that file already became), turns rows abandoned by a dead
// process into unknown ones, and drives the send engine with progress
// output, metrics and logs. It also holds the smaller use cases commands
// call beside it: check, preview, template sync, suppression files.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/screen"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// Options configure Run. Zero values get the defaults in brackets.
type Options struct {
	Store driver.Driver
	IO    *ui.IOStreams
	// File is the recipient CSV; ignored when ResumeID is set.
	File                string
	Name                string // campaign name [file name]
	Spec                campaign.Spec
	Region              string        // default country for national numbers
	Delimiter           rune          // 0: detect
	PhoneColumn         string        // "": detect
	SkipContactedWithin time.Duration // see ReadOptions
	// Again makes a separate campaign even when one with the same message
	// and recipients exists, and sends to numbers that got the same
	// template within screen.SameTemplateWindow.
	Again bool
	Shard screen.Shard // only this host's part of the list (--shard K/N)
	// IgnoreWindow: a text campaign goes also to recipients without an
	// open customer service window (--ignore-window); its claims do not
	// check the window either.
	IgnoreWindow bool
	ResumeID     int64 // resume this campaign instead of importing
	// From, with Segment, makes the campaign of campaign From's rows in
	// Segment instead of a file (retargeting, retarget.go).
	From    int64
	Segment campaign.Segment
	// Schedule is the campaign's start, validity and send window; its
	// zero fields keep what an existing campaign has.
	Schedule campaign.Schedule
	// Share is the campaign's priority, weight and borrowing: a new
	// campaign gets it over campaign.DefaultShare, an existing one has
	// the fields set changed.
	Share campaign.ShareChange

	Sender dispatch.Sender
	Clock  clock.Clock // [clock.Real]
	Token  func(env string) (string, error)

	// SendAPI is --api: which endpoint the campaign's template goes through
	// ("": cloud, /messages for every send; see Endpoint).
	SendAPI campaign.API
	// TTL is --ttl (0: keep the campaign's, or none), checked by CheckTTL
	// and kept with the campaign.
	TTL time.Duration
	// MaxHeld is --max-held: the campaign stops adding sends while this
	// many are held for quality assessment (0 never stops).
	MaxHeld int

	// Policy is how the campaign is sent, passed whole to the engine.
	Policy dispatch.Policy
	Poll   time.Duration
	// MaxCost, when set (--max-cost), is the campaign's budget from this
	// run on; nil keeps the one stored with it, if any.
	MaxCost *MaxCost
	// PairGap keeps two messages to one person, from any of our numbers,
	// this far apart (0: no gap). It is stored with the campaign, for its
	// claims in every process.
	PairGap time.Duration
	// Stale is how long a runner may miss its heartbeats before its rows
	// become unknown, on any host (see liveness). [30s]
	Stale time.Duration
	// ProgressInterval between plain progress lines. [10s; 1s with
	// ProgressJSON]
	ProgressInterval time.Duration
	// ProgressJSON writes progress as JSON lines (--progress json).
	ProgressJSON bool
	// Probe: see dispatch.Options.
	Probe func(ctx context.Context) error
	Label string // progress label, e.g. "SANDBOX" [campaign N]
	// Flags ends every wasend command line a message suggests: the global
	// flags (--db, --sandbox, --limits) that reach this run's state, each
	// with its leading space.
	Flags string
	// Location is the time zone of quota days (store.Location). [time.Local]
	Location *time.Location
	// Observe also receives every engine event (metrics, logs); it must be
	// safe for concurrent use.
	Observe func(dispatch.Event)
	// Drain, when set, is called once the engine has stopped, before the
	// last progress line: it stops what still changes the campaign's rows
	// (the run's own webhook receiver), so that line and the caller's
	// summary read the same counts.
	Drain func()
	// Shared, when set (--limits), copies the shared suppression list and
	// settings into Store before the first claim and every poll after.
	Shared SharedSync
	// Preflight, when set, is called by Prepare just before it reads the
	// file into a campaign (a new one, or one the file continues); its
	// error stops Prepare with nothing imported. It is not called when
	// Prepare finds the campaign without importing (ResumeID, the same
	// file again).
	Preflight func(ctx context.Context) error

	// The rest is read by Run only: what it sets up around the engine.

	// API is where the Graph calls go; Run sets Sender and Token from it.
	API APIConfig
	// Timeout of each Graph request; one that times out is marked unknown.
	Timeout time.Duration
	// TemplateChecked: the caller checked a resumed campaign's template
	// already (campaign resume, before unpausing it).
	TemplateChecked bool
	// Report is the --report file the skipped rows are written to ("":
	// none).
	Report string
	// MetricsAddr serves Prometheus metrics while sending ("": not).
	MetricsAddr string
	// Webhooks, when set, is the receiver served beside sending.
	Webhooks *RunWebhooks
	// OpenShared, when set, connects to what several hosts share
	// (--limits) and gives the SharedSync for Shared, nil without it; Run
	// calls close when it returns.
	OpenShared func(ctx context.Context) (s SharedSync, close func(), err error)
	// Logger records the engine's events. [slog.Default]
	Logger *slog.Logger
	// Now is the time of what Run records outside the engine (the
	// numbers' syncs). [time.Now]
	Now func() time.Time
	// Display is the zone times are shown to people in. [time.Local]
	Display *time.Location
}

// Result is what Prepare found or made.
type Result struct {
	Campaign campaign.Campaign
	Counts   campaign.Counts
	Imported bool // this run imported the file into a new campaign
	// Continued: the file's rows overlap the unfinished campaign with the
	// same message, and its new rows (Added) were added to it; Already of
	// its recipients were in it before.
	Continued      bool
	Added, Already int
	// Elsewhere counts the file's rows left to other hosts (--shard).
	Elsewhere int
	// Phone is the column the numbers were read from when this run read
	// the file (zero when it found the campaign without reading it).
	Phone recipients.PhoneColumn
	// Repeat: a finished campaign already sent this message to these
	// recipients; nothing was imported (Campaign is that campaign).
	Repeat bool
	// Skipped rows of this import, the first MaxListedSkips of them
	// (`campaign skipped ID` lists all); empty when resuming.
	Skipped []campaign.Skip

	// Set by Run. Done: the campaign had nothing left to send, and Run
	// sent nothing (Counts are its counts). Ran: the engine ran, and
	// Counts are the campaign's counts after it stopped.
	Done, Ran bool
}

// Send runs the engine on a prepared campaign until it ends. It returns
// dispatch.ErrCapped, campaign.ErrPaused, campaign.ErrCancelled or ctx's
// error for the runs that stop early.
func Send(ctx context.Context, o Options, c campaign.Campaign) error {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Stale <= 0 {
		o.Stale = 30 * time.Second
	}
	if c.State == campaign.CampaignCancelled {
		return fmt.Errorf("campaign %d: %w on %s; a cancelled campaign is final", c.ID, campaign.ErrCancelled,
			c.FinishedAt.UTC().Format(time.DateTime+" UTC"))
	}
	if c.State == campaign.CampaignPaused {
		err := campaign.ErrPaused
		if c.PauseReason == campaign.NoUsableAccountReason {
			err = fmt.Errorf("%w: %w", campaign.ErrPaused, campaign.ErrNoUsableAccount)
		}
		return fmt.Errorf("campaign %d: %w: %s (resume it with `wasend campaign resume %d%s`)", c.ID, err, c.PauseReason, c.ID, o.Flags)
	}
	if err := o.Store.SetPairGap(ctx, c.ID, o.PairGap); err != nil {
		return err
	}
	defer tuneGC(sendGCPercent, sendMemoryLimit)()
	here := ThisProcess()
	now := o.Clock.Now()
	live := Liveness(o.Stale)
	moved, err := o.Store.RecoverOrphans(ctx, now, func(r campaign.Runner) bool { return live.Dead(r, now) })
	if err != nil {
		return err
	}
	if n := moved[c.ID]; n > 0 && o.Observe != nil {
		o.Observe(dispatch.Event{Kind: dispatch.EventRecovered, At: now, Count: n})
	}
	// Each campaign's rows are named with it: its own retry resends them.
	for _, id := range slices.Sorted(maps.Keys(moved)) {
		o.IO.Warnf("%d message(s) of campaign %d were in flight when an earlier run stopped; they are marked unknown and will not be resent automatically (see `wasend campaign retry %d --unknown%s`)", moved[id], id, id, o.Flags)
	}
	counts, err := o.Store.Counts(ctx, c.ID)
	if err != nil {
		return err
	}
	label := o.Label
	if label == "" {
		label = fmt.Sprintf("campaign %d", c.ID)
	}
	prog := ui.NewProgress(o.IO, ui.ProgressOptions{
		Label: label, Total: counts.Total(), Sent: counts[campaign.Sent], Failed: counts[campaign.Failed],
		Unknown: counts[campaign.Unknown], Interval: o.ProgressInterval, Now: o.Clock.Now,
		Estimate: progressEstimate(ctx, o, c.ID), JSON: o.ProgressJSON, Campaign: c.ID,
	})
	self := campaign.Runner{ID: fmt.Sprintf("%s/%d/%d", here.Host, here.PID, now.UnixNano()), Host: here.Host, PID: here.PID, Space: here.Space}
	ownRunners.Store(self.ID, struct{}{})
	defer ownRunners.Delete(self.ID)
	endpoint, err := Endpoint(ctx, o.Store, o.SendAPI, c.Spec)
	if err != nil {
		return err
	}
	if err := CheckTTL(ctx, o.Store, o.SendAPI, c.Spec, o.TTL); err != nil {
		return err
	}
	ttl, err := o.Store.SetSending(ctx, c.ID, o.MaxHeld, o.TTL)
	if err != nil {
		return err
	}
	if ttl != o.TTL { // the campaign's, kept from an earlier run
		if err := CheckTTL(ctx, o.Store, o.SendAPI, c.Spec, ttl); err != nil {
			return fmt.Errorf("campaign %d keeps %w", c.ID, err)
		}
	}
	ledger := claim.New(o.Store)
	eng, err := dispatch.New(dispatch.Options{
		Campaign: c, Endpoint: endpoint, Ledger: ledger, Sender: o.Sender, Clock: o.Clock, Token: o.Token,
		Runner: self, Stale: o.Stale, Dead: live.Dead,
		Policy: o.Policy, Poll: o.Poll, Probe: o.Probe, Reactions: sharedReactions(o.Shared),
		Observe: func(ev dispatch.Event) {
			if o.Observe != nil {
				o.Observe(ev)
			}
			switch ev.Kind {
			case dispatch.EventSent:
				prog.Sent()
			case dispatch.EventFailed:
				prog.Failed()
			case dispatch.EventUnknown:
				prog.Unknown()
			case dispatch.EventRetry:
				prog.Retry()
			case dispatch.EventWait:
				notable := ev.Wait.Reason == campaign.WaitCapped || ev.Wait.Reason == campaign.WaitNoAccount || ev.Wait.Reason == campaign.WaitReach ||
					ev.Wait.Reason == campaign.WaitScheduled || ev.Wait.Reason == campaign.WaitWindow || ev.Wait.Reason == campaign.WaitPriority ||
					ev.Wait.Reason == campaign.WaitLimits || ev.Wait.Reason == campaign.WaitLimitsLost || ev.Wait.Reason == campaign.WaitHeld
				prog.Waiting(string(ev.Wait.Reason), describeWait(ev.Wait, ev.At, o.Location, o.Flags), notable)
			case dispatch.EventResumed:
				prog.Waiting("", "", false)
			case dispatch.EventOutage:
				prog.Waiting("outage", describeOutage(ev.Outage, ev.At, o.Policy.WithDefaults().OutageTimeout), true)
			case dispatch.EventRecovered:
				o.IO.Warnf("%d message(s) were in flight in a process that stopped (no heartbeat); they are marked unknown and will not be resent automatically (see `wasend campaign retry %d --unknown%s`)", ev.Count, c.ID, o.Flags)
				for range ev.Count {
					prog.Unknown()
				}
			}
		},
	})
	if err != nil {
		return err
	}
	stopShared := startShared(ctx, o)
	err = eng.Run(ctx)
	stopShared()
	prog.Waiting("", "", false)
	if o.Drain != nil {
		o.Drain()
	}
	// The last line shows the database's counts, as the summary does: a
	// status webhook may have put a message counted as sent back to pending.
	if end, cerr := o.Store.Counts(context.WithoutCancel(ctx), c.ID); cerr == nil {
		prog.Settle(end[campaign.Sent], end[campaign.Failed], end[campaign.Unknown])
		states := map[string]int{}
		for _, s := range campaign.States {
			states[string(s)] = end[s]
		}
		prog.SetStates(states)
	}
	prog.Stop()
	if rerr := ledger.GiveBackRefunds(context.WithoutCancel(ctx)); rerr != nil {
		// They stay queued in the database for the next claim.
		o.IO.Warnf("%v; they are given back at the next run", rerr)
	}
	return stoppedWhy(ctx, o.Store, c.ID, err)
}

// stoppedWhy adds to a pause or cancel the engine met — perhaps made from
// another shell — what the operator needs to know.
func stoppedWhy(ctx context.Context, st driver.Driver, id int64, err error) error {
	switch {
	case errors.Is(err, campaign.ErrCancelled):
		return fmt.Errorf("campaign %d: %w; its pending messages are not sent", id, err)
	case errors.Is(err, campaign.ErrPaused) && !errors.Is(err, campaign.ErrNoUsableAccount):
		c, rerr := st.Campaign(context.WithoutCancel(ctx), id)
		if rerr != nil || c.PauseReason == "" {
			return fmt.Errorf("campaign %d: %w", id, err)
		}
		return fmt.Errorf("campaign %d: %w: %s", id, err, c.PauseReason)
	}
	return err
}

func describeWait(w *campaign.WaitError, now time.Time, loc *time.Location, flags string) string {
	if loc == nil {
		loc = time.Local
	}
	switch w.Reason {
	case campaign.WaitTokens:
		return "rate limit: waiting for the next token"
	case campaign.WaitGlobal:
		return "global rate limit: waiting for the next token"
	case campaign.WaitCapped:
		return campaign.CappedHint(now, loc, flags)
	case campaign.WaitRetry:
		return "waiting to retry throttled or failed sends"
	case campaign.WaitInFlight:
		return "waiting for requests in flight"
	case campaign.WaitNoAccount:
		return "no enabled account; add or enable one (`wasend account list" + flags + "`)"
	case campaign.WaitReach:
		return "the portfolio's messaging limit (distinct recipients in 24 h) is used up; room again at " +
			w.Until.In(loc).Format(time.DateTime) + " (`wasend portfolio list" + flags + "`)"
	case campaign.WaitScheduled:
		return "scheduled: starts at " + w.Until.In(loc).Format("2006-01-02 15:04:05 MST")
	case campaign.WaitHeld:
		return "template pacing: " + w.Detail + "; no more sends of the template until statuses release or drop them (looking again at " +
			w.Until.In(loc).Format(time.TimeOnly) + ")"
	case campaign.WaitPriority:
		return "another campaign on these accounts goes first (a higher priority, or its turn by weight)"
	case campaign.WaitWindow:
		return "outside the recipients' send window; the next one opens at " + w.Until.In(loc).Format("2006-01-02 15:04:05 MST")
	case campaign.WaitLimits:
		if w.Detail != "" {
			return "waiting for shared limits: Redis does not answer (" + w.Detail + "); those accounts claim nothing until it does, then sending resumes by itself"
		}
		return "waiting for shared limits: Redis does not answer; nothing is claimed until it does (requests in flight finish), then sending resumes by itself"
	case campaign.WaitLimitsLost:
		if w.Detail != "" {
			return "waiting for shared limits: " + hint.Fill(w.Detail, flags, true)
		}
		return "Redis lost state (restarted without persistence?): nothing is sent until `wasend quota reset --force" + flags + "` rebuilds the day from each host's own count (`wasend limits status" + flags + "` says for which accounts)"
	}
	return string(w.Reason)
}

// describeOutage is the progress line while the Cloud API does not answer.
func describeOutage(o *campaign.Outage, now time.Time, timeout time.Duration) string {
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	return fmt.Sprintf("Cloud API outage: no account has had an answer since %s (%s); next try in %s, pausing after %s; nothing is failed meanwhile",
		o.Since.Format(time.TimeOnly), o.Error, o.NextProbe.Sub(now).Round(time.Second), timeout)
}

// progressEstimate gives the progress line the ETA status shows for
// campaign id (report.CampaignETA, the planner's), made at the run's
// clock: the line shows the same time left as status, caps and quota days
// counted. An ETA that cannot be made shows no time left. It reads on
// after an interrupt, for the last line.
func progressEstimate(ctx context.Context, o Options, id int64) func() ui.Estimate {
	ctx = context.WithoutCancel(ctx)
	return func() ui.Estimate {
		c, err := o.Store.Campaign(ctx, id)
		if err != nil {
			return ui.Estimate{}
		}
		rep := report.Reporter{Src: o.Store, Reads: readmodel.New(o.Store), Now: o.Clock.Now(), Loc: o.Store.Location()}
		e, err := rep.CampaignETA(ctx, c)
		switch {
		case err != nil || e == nil:
			return ui.Estimate{}
		case e.Finish == nil:
			return ui.Estimate{Never: e.Never != ""}
		}
		return ui.Estimate{Finish: *e.Finish}
	}
}
