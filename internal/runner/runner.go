// Package runner carries out `wasend campaign run`: it imports a recipient
// file into a campaign (or finds the campaign that file already became),
// turns rows abandoned by a dead process into unknown ones, and drives the
// send engine with progress output.
package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/ui"
)

// Options configure Run. Zero values get the defaults in brackets.
type Options struct {
	Store *store.Store
	IO    *ui.IOStreams
	// File is the recipient CSV; ignored when ResumeID is set.
	File                string
	Name                string // campaign name [file name]
	Spec                campaign.Spec
	Region              string        // default country for national numbers
	Delimiter           rune          // 0: detect
	PhoneColumn         string        // "": detect
	SkipContactedWithin time.Duration // see ReadOptions
	ResumeID            int64         // resume this campaign instead of importing

	Sender dispatch.Sender
	Clock  dispatch.Clock // [dispatch.RealClock]
	Token  func(env string) (string, error)

	Workers        int
	Poll           time.Duration
	StopWhenCapped bool
	// LongWait: see dispatch.Options.LongWait.
	LongWait time.Duration
	// Stale is how long a runner may miss its heartbeats before its rows
	// become unknown, on any host (see liveness). [30s]
	Stale time.Duration
	// ProgressInterval between plain progress lines. [10s]
	ProgressInterval time.Duration
	// MaxAttempts, BackoffBase, BackoffMax are the transient retry policy.
	MaxAttempts             int
	BackoffBase, BackoffMax time.Duration
	// Cooldown, Restriction and ErrorPauseRatio: see dispatch.Options.
	Cooldown, Restriction time.Duration
	ErrorPauseRatio       float64
	// Probe and OutageTimeout: see dispatch.Options.
	Probe         func(ctx context.Context) error
	OutageTimeout time.Duration
	Label         string // progress label, e.g. "SANDBOX" [campaign N]
	// Location is the time zone of quota days (WASEND_TZ). [time.Local]
	Location *time.Location
	// Observe also receives every engine event (metrics, logs); it must be
	// safe for concurrent use.
	Observe func(dispatch.Event)
}

// Result is how a run ended.
type Result struct {
	Campaign campaign.Campaign
	Counts   campaign.Counts
	Imported bool // this run imported the file
	// Skipped rows of this import (empty when resuming).
	Skipped []campaign.Skip
}

// Fingerprint identifies a campaign by its file's content and message spec:
// running the same command on the same file finds the same campaign.
func Fingerprint(file io.Reader, spec campaign.Spec, ro ReadOptions) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	ro.Region = strings.ToUpper(ro.Region)
	meta, _ := json.Marshal(struct {
		Spec campaign.Spec
		Read ReadOptions
	}{spec, ro})
	h.Write([]byte{0})
	h.Write(meta)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Prepare finds or creates the campaign to run.
func Prepare(ctx context.Context, o Options) (Result, error) {
	var res Result
	if o.ResumeID != 0 {
		c, err := o.Store.Campaign(ctx, o.ResumeID)
		if err != nil {
			return res, err
		}
		res.Campaign = c
		return res, nil
	}
	f, err := recipients.OpenFile("recipient", o.File)
	if err != nil {
		return res, err
	}
	defer f.Close()
	ro := ReadOptions{Region: o.Region, Delimiter: o.Delimiter, PhoneColumn: o.PhoneColumn,
		SkipContactedWithin: o.SkipContactedWithin}
	fp, err := Fingerprint(f, o.Spec, ro)
	if err != nil {
		return res, fmt.Errorf("read %s: %w", o.File, err)
	}
	c, err := o.Store.CampaignByFingerprint(ctx, fp)
	if err == nil {
		res.Campaign = c
		return res, nil
	}
	if !errors.Is(err, campaign.ErrNotFound) {
		return res, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("read %s: %w", o.File, err)
	}
	name := o.Name
	if name == "" {
		name = filepath.Base(o.File)
	}
	c, skipped, err := ImportWith(ctx, o.Store, f, o.File, campaign.Campaign{
		Name: name, Fingerprint: fp, Source: o.File, Spec: o.Spec,
	}, ro)
	if errors.Is(err, store.ErrExists) {
		// Another process imported the same file meanwhile (it held the
		// write lock while we hashed): continue its campaign.
		c, err = o.Store.CampaignByFingerprint(ctx, fp)
		res.Campaign = c
		return res, err
	}
	if err != nil {
		return res, err
	}
	res.Campaign, res.Imported, res.Skipped = c, true, skipped
	return res, nil
}

// Import reads a recipient file into a new campaign in one transaction:
// an error or an interrupt leaves nothing behind. Rows that can't be used
// are skipped, stored with their line and reason, and returned.
func Import(ctx context.Context, st *store.Store, r io.Reader, file string, c campaign.Campaign, region string) (campaign.Campaign, []campaign.Skip, error) {
	return ImportWith(ctx, st, r, file, c, ReadOptions{Region: region})
}

// ReadOptions say how to read a recipient file.
type ReadOptions struct {
	Region      string // default country of national numbers
	Delimiter   rune   // 0: detect from the header
	PhoneColumn string // "": the first of phone, mobile, msisdn, wa_id, number
	// SkipContactedWithin skips numbers any campaign sent to within this
	// long (protection against 131049 and the pair limit); 0: off.
	SkipContactedWithin time.Duration
	// Contacted is filled by the import from the store (and by callers of
	// Check): numbers sent to within SkipContactedWithin.
	Contacted map[string]store.Contact `json:"-"`
}

func (ro ReadOptions) recipients(spec campaign.Spec) recipients.Options {
	return recipients.Options{Region: ro.Region, Delimiter: ro.Delimiter, PhoneColumn: ro.PhoneColumn,
		Params: spec.Params, Text: spec.Text, NamedParams: spec.NamedParams, Header: spec.Header, Buttons: spec.Buttons}
}

// ImportWith is Import with every reading option.
//
// Rows are made on every core (recipients.Parallel) and stored a batch at a
// time; skipped rows still come out, and are stored, in file order.
func ImportWith(ctx context.Context, st *store.Store, r io.Reader, file string, c campaign.Campaign, ro ReadOptions) (campaign.Campaign, []campaign.Skip, error) {
	rd, err := recipients.Open(r, file, ro.recipients(c.Spec))
	if err != nil {
		return c, nil, err
	}
	if ro.SkipContactedWithin > 0 && ro.Contacted == nil {
		if ro.Contacted, err = st.ContactedWithin(ctx, ro.SkipContactedWithin); err != nil {
			return c, nil, err
		}
	}
	im, err := st.Import(ctx, c)
	if err != nil {
		return c, nil, err
	}
	defer im.Rollback()
	defer tuneGC(importGCPercent, 0)()
	rows := recipients.Parallel(rd, runtime.GOMAXPROCS(0))
	defer rows.Close()
	var (
		skipped []campaign.Skip
		batch   = make([]campaign.Message, 0, store.ImportBatch)
		invalid []campaign.Skip // rows among batch's lines that can't be used
	)
	interrupted := func() error {
		return fmt.Errorf("import of %s interrupted, nothing stored: %w", file, ctx.Err())
	}
	flush := func() error {
		dups, err := im.AddBatch(ctx, batch)
		if err == nil {
			skips := mergeSkips(invalid, dups)
			if err = im.SkipBatch(ctx, skips); err == nil {
				skipped = append(skipped, skips...)
			}
		}
		if err != nil && ctx.Err() != nil {
			return interrupted()
		}
		batch, invalid = batch[:0], invalid[:0]
		return err
	}
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return c, nil, interrupted()
		}
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var rowErr *recipients.RowError
		if errors.As(err, &rowErr) {
			invalid = append(invalid, campaign.Skip{Line: rowErr.Line, Input: rowErr.Value, Reason: rowReason(rowErr)})
			if len(invalid) == store.ImportBatch {
				if err := flush(); err != nil {
					return c, nil, err
				}
			}
			continue
		}
		if err != nil {
			return c, nil, fmt.Errorf("nothing stored: %w", err)
		}
		if why := ro.recentlyContacted(row.Phone); why != "" {
			invalid = append(invalid, campaign.Skip{Line: row.Line, Input: row.Input, Reason: why})
			if len(invalid) == store.ImportBatch {
				if err := flush(); err != nil {
					return c, nil, err
				}
			}
			continue
		}
		if batch = append(batch, message(row)); len(batch) == store.ImportBatch {
			if err := flush(); err != nil {
				return c, nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return c, nil, err
	}
	c, err = im.Commit(ctx)
	return c, skipped, err
}

// mergeSkips merges two lists of skipped rows, each in file order.
func mergeSkips(a, b []campaign.Skip) []campaign.Skip {
	out := make([]campaign.Skip, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Line <= b[0].Line {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// recentlyContacted says why a number is skipped under
// SkipContactedWithin, or "" when it is not.
func (ro ReadOptions) recentlyContacted(phone string) string {
	c, ok := ro.Contacted[phone]
	if !ok || ro.SkipContactedWithin <= 0 {
		return ""
	}
	return fmt.Sprintf("contacted within %s (campaign %d, %s)", ro.SkipContactedWithin, c.CampaignID, c.At.UTC().Format(time.RFC3339))
}

// rowReason is how a row problem is reported: the column, then why.
func rowReason(e *recipients.RowError) string {
	if e.Column != "" {
		return fmt.Sprintf("column %s: %s", e.Column, e.Reason)
	}
	return e.Reason
}

// Send runs the engine on a prepared campaign until it ends. It returns
// dispatch.ErrCapped, campaign.ErrPaused, campaign.ErrCancelled or ctx's
// error for the runs that stop early.
func Send(ctx context.Context, o Options, c campaign.Campaign) error {
	if o.Clock == nil {
		o.Clock = dispatch.RealClock{}
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
		return fmt.Errorf("campaign %d: %w: %s (resume it with `wasend campaign resume %d`)", c.ID, err, c.PauseReason, c.ID)
	}
	defer tuneGC(sendGCPercent, sendMemoryLimit)()
	host, _ := os.Hostname()
	now := o.Clock.Now()
	live := liveness{host: host, pid: os.Getpid(), stale: o.Stale, alive: processAlive}
	moved, err := o.Store.RecoverOrphans(ctx, now, func(r campaign.Runner) bool { return live.dead(r, now) })
	if err != nil {
		return err
	}
	if moved > 0 && o.Observe != nil {
		o.Observe(dispatch.Event{Kind: dispatch.EventRecovered, At: now, Count: moved})
	}
	if moved > 0 {
		o.IO.Warnf("%d message(s) were in flight when an earlier run stopped; they are marked unknown and will not be resent automatically (see `wasend campaign retry %d --unknown`)", moved, c.ID)
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
		Unknown: counts[campaign.Unknown], Interval: o.ProgressInterval,
	})
	self := campaign.Runner{ID: fmt.Sprintf("%s/%d/%d", host, os.Getpid(), now.UnixNano()), Host: host, PID: os.Getpid()}
	ownRunners.Store(self.ID, struct{}{})
	defer ownRunners.Delete(self.ID)
	eng, err := dispatch.New(dispatch.Options{
		Campaign: c, Ledger: o.Store, Sender: o.Sender, Clock: o.Clock, Token: o.Token,
		Runner: self, Stale: o.Stale, Dead: live.dead,
		Workers: o.Workers, Poll: o.Poll, StopWhenCapped: o.StopWhenCapped, LongWait: o.LongWait,
		MaxAttempts: o.MaxAttempts, BackoffBase: o.BackoffBase, BackoffMax: o.BackoffMax,
		Cooldown: o.Cooldown, Restriction: o.Restriction, ErrorPauseRatio: o.ErrorPauseRatio,
		Probe: o.Probe, OutageTimeout: o.OutageTimeout,
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
				notable := ev.Wait.Reason == campaign.WaitCapped || ev.Wait.Reason == campaign.WaitNoAccount
				prog.Waiting(describeWait(ev.Wait, ev.At, o.Location), notable)
			case dispatch.EventResumed:
				prog.Waiting("", false)
			case dispatch.EventOutage:
				prog.Waiting(describeOutage(ev.Outage, ev.At, o.OutageTimeout), true)
			case dispatch.EventRecovered:
				o.IO.Warnf("%d message(s) were in flight in a process that stopped (no heartbeat); they are marked unknown and will not be resent automatically (see `wasend campaign retry %d --unknown`)", ev.Count, c.ID)
				for range ev.Count {
					prog.Unknown()
				}
			}
		},
	})
	if err != nil {
		return err
	}
	err = eng.Run(ctx)
	prog.Waiting("", false)
	prog.Stop()
	return stoppedWhy(ctx, o.Store, c.ID, err)
}

// stoppedWhy adds to a pause or cancel the engine met — perhaps made from
// another shell — what the operator needs to know.
func stoppedWhy(ctx context.Context, st *store.Store, id int64, err error) error {
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

func describeWait(w *campaign.WaitError, now time.Time, loc *time.Location) string {
	switch w.Reason {
	case campaign.WaitTokens:
		return "rate limit: waiting for the next token"
	case campaign.WaitGlobal:
		return "global rate limit: waiting for the next token"
	case campaign.WaitCapped:
		return campaign.CappedHint(now, loc)
	case campaign.WaitRetry:
		return "waiting to retry throttled or failed sends"
	case campaign.WaitInFlight:
		return "waiting for requests in flight"
	case campaign.WaitNoAccount:
		return "no enabled account; add or enable one (`wasend account list`)"
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
