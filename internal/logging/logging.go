// Package logging sets up wasend's structured log (log/slog) and turns the
// send engine's events into log records: one per send outcome at debug
// level, state changes at info, and what needs a person at warn.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
)

// Formats and Levels are the accepted values of New's arguments.
var (
	Formats = []string{"text", "json"}
	Levels  = []string{"debug", "info", "warn", "error"}
)

var levels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
}

// New returns a logger writing to w in format "text" or "json" (empty:
// text) from level "debug", "info", "warn" or "error" (empty: info) up.
// Both are matched ignoring case.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	lvl := slog.LevelInfo
	if level != "" {
		l, ok := levels[strings.ToLower(strings.TrimSpace(level))]
		if !ok {
			return nil, fmt.Errorf("log level %q: want one of %s", level, strings.Join(Levels, ", "))
		}
		lvl = l
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want one of %s", format, strings.Join(Formats, ", "))
}

var outcomeNames = map[dispatch.EventKind]string{
	dispatch.EventSent: "sent", dispatch.EventRetry: "retry",
	dispatch.EventFailed: "failed", dispatch.EventUnknown: "unknown",
}

// Observer returns a dispatch.Options.Observe function that logs the events
// of one campaign's engine to log, each line with the campaign's id once
// (give log no "campaign" of its own). It is safe for concurrent use.
//
// Only names, ids, codes and the API's error text are logged: never a
// token, nor the name of the variable that holds it, nor a phone number.
//
// now is the clock a wait's line is stamped with (the engine's; nil: the
// wall clock): a wait's end is logged only while it is ahead of that.
func Observer(log *slog.Logger, campaignID int64, now func() time.Time) func(dispatch.Event) {
	if now == nil {
		now = time.Now
	}
	log = log.With(slog.Int64("campaign", campaignID))
	// In-flight requests of a dropped account bring the same news again.
	var dropped sync.Map // campaign and account ID → struct{}
	return func(ev dispatch.Event) {
		ctx := context.Background()
		if outcome, ok := outcomeNames[ev.Kind]; ok {
			logOutcome(ctx, log, outcome, ev)
			return
		}
		switch ev.Kind {
		case dispatch.EventWait:
			attrs := []slog.Attr{slog.String("reason", string(ev.Wait.Reason))}
			// An end already passed when the line is written says nothing
			// (the wait was worked out before a claim that took a while):
			// only a future one is logged, with how long that is. The line
			// carries the instant it was judged at, so its time is never
			// after its until.
			at := now()
			if ev.At.After(at) {
				at = ev.At
			}
			if left := ev.Wait.Until.Sub(at); !ev.Wait.Until.IsZero() && left > 0 {
				attrs = append(attrs, slog.Time("until", ev.Wait.Until), slog.Duration("for", roundWait(left)))
			}
			// Caps and a missing account wait for a person; waiting for the
			// next token or a retry time is the normal pace: debug.
			level := slog.LevelDebug
			switch ev.Wait.Reason {
			case campaign.WaitCapped, campaign.WaitNoAccount, campaign.WaitReach, campaign.WaitLimits, campaign.WaitLimitsLost, campaign.WaitHeld:
				level = slog.LevelWarn
			case campaign.WaitGlobal, campaign.WaitScheduled, campaign.WaitWindow, campaign.WaitPriority:
				level = slog.LevelInfo
			}
			if ev.Wait.Detail != "" {
				attrs = append(attrs, slog.String("detail", ev.Wait.Detail))
			}
			logAt(ctx, log, at, level, "waiting", attrs...)
			if ev.Wait.Debug != "" {
				// The gates' errors whole, claim ids and all: debug only.
				log.LogAttrs(ctx, slog.LevelDebug, "shared limits error", slog.String("error", ev.Wait.Debug))
			}
		case dispatch.EventResumed:
			log.LogAttrs(ctx, slog.LevelDebug, "resumed sending")
		case dispatch.EventOutage:
			log.LogAttrs(ctx, slog.LevelWarn, "Cloud API outage: claiming stopped", slog.Time("since", ev.Outage.Since),
				slog.String("error", ev.Outage.Error), slog.Time("next_probe", ev.Outage.NextProbe))
		case dispatch.EventRecovered:
			log.LogAttrs(ctx, slog.LevelWarn, "rows of a stopped run marked unknown", slog.Int("count", ev.Count))
		case dispatch.EventLost:
			log.LogAttrs(ctx, slog.LevelWarn, "rows whose lease this run lost dropped (left to their holder, not resent)",
				slog.Int("count", ev.Count))
		case dispatch.EventAccount:
			out := ev.Outcome
			if out.DropAccount {
				key := [2]int64{ev.Claim.Message.CampaignID, ev.Claim.Account.ID}
				if _, seen := dropped.LoadOrStore(key, struct{}{}); seen {
					return
				}
			}
			logAccount(ctx, log, ev)
		case dispatch.EventPaused:
			log.LogAttrs(ctx, slog.LevelWarn, "campaign paused",
				slog.String("reason", ev.Outcome.Pause))
		}
	}
}

// roundWait is d as a reader wants it: whole seconds from a second up.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func logOutcome(ctx context.Context, log *slog.Logger, outcome string, ev dispatch.Event) {
	if !log.Enabled(ctx, slog.LevelDebug) {
		return // the engine's hot path: build nothing
	}
	c, out := ev.Claim, ev.Outcome
	attrs := []slog.Attr{
		slog.Int64("message", c.Message.ID),
		slog.Int("line", c.Message.Line),
		slog.String("account", c.Account.Name),
		slog.String("outcome", outcome),
	}
	if out.Class != "" {
		attrs = append(attrs, slog.String("class", out.Class))
	}
	if out.ErrorCode != 0 {
		attrs = append(attrs, slog.Int("code", out.ErrorCode))
	}
	if out.WAMID != "" {
		attrs = append(attrs, slog.String("wamid", out.WAMID))
	}
	if out.Error != "" {
		attrs = append(attrs, slog.String("error", out.Error))
	}
	if ev.Kind == dispatch.EventRetry && !out.RetryAt.IsZero() {
		attrs = append(attrs, slog.Time("retry_at", out.RetryAt))
	}
	if !c.At.IsZero() && !ev.At.Before(c.At) {
		attrs = append(attrs, slog.Duration("took", ev.At.Sub(c.At)))
	}
	log.LogAttrs(ctx, slog.LevelDebug, "send "+outcome, attrs...)
}

// logAccount says what happened to an account: a throttle is routine
// (info); a restriction or a dropped account needs a person (warn).
func logAccount(ctx context.Context, log *slog.Logger, ev dispatch.Event) {
	out := ev.Outcome
	attrs := []slog.Attr{
		slog.String("account", ev.Claim.Account.Name),
		slog.Int("code", out.ErrorCode),
	}
	switch {
	case out.DropAccount:
		attrs = append(attrs, slog.String("error", out.Error))
		log.LogAttrs(ctx, slog.LevelWarn, "account dropped from campaign", attrs...)
	case out.Restrict > 0:
		attrs = append(attrs, slog.Duration("for", out.Restrict), slog.String("error", out.Error))
		log.LogAttrs(ctx, slog.LevelWarn, "account restricted", attrs...)
	case out.Throttle != nil:
		attrs = append(attrs, slog.Duration("cooldown", out.Throttle.Cooldown))
		if out.Throttle.Hint > 0 {
			attrs = append(attrs, slog.Duration("hint", out.Throttle.Hint))
		}
		if out.Throttle.App {
			attrs = append(attrs, slog.Bool("app_wide", true))
		}
		log.LogAttrs(ctx, slog.LevelInfo, "account throttled", attrs...)
	}
}

// logAt is log.LogAttrs with the record's time given.
func logAt(ctx context.Context, log *slog.Logger, at time.Time, level slog.Level, msg string, attrs ...slog.Attr) {
	if !log.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(at, level, msg, 0)
	r.AddAttrs(attrs...)
	_ = log.Handler().Handle(ctx, r) // as LogAttrs does, a handler's error is dropped
}
