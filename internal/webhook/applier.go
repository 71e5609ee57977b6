package webhook

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Ledger is what the applier needs of the database. *store.Store is one.
type Ledger interface {
	InboxStore
	// InboundSettings are the database's inbound settings (ParseInbound).
	InboundSettings(ctx context.Context) (map[string]string, error)
	// PruneInbound deletes inbound messages older than before.
	PruneInbound(ctx context.Context, before time.Time) (int, error)
	// Now is the database's clock, which retention is measured on.
	Now() time.Time
}

// Applier drains the inbox: it applies stored bodies apart from the HTTP
// handler. Several appliers (processes) may share one database; each body
// is applied once.
type Applier struct {
	ledger  Ledger
	rules   Rules
	metrics *Metrics
	log     *slog.Logger
	wake    chan struct{}
	// Poll is how often the inbox is looked at without a wake-up: bodies
	// stored by other processes, statuses waiting for their row (default 1 s).
	Poll time.Duration
	// Gather is the least time between two passes a wake-up starts
	// (default 100 ms): at thousands of posts a second a pass applies
	// hundreds of bodies set-based rather than a few, within the inbox's
	// 5 s lag.
	Gather time.Duration
	// OnApply, when set, sees every pass that did something.
	OnApply func(campaign.ApplyReport)
	pruned  time.Time // when inbound messages were last pruned
	// The inbound settings last read and what they parsed to: parsed
	// again only when they change.
	settings map[string]string
	inbound  InboundConfig
}

// pruneEvery is how often the applier deletes inbound messages past their
// retention: one indexed DELETE, off the webhook's path.
const pruneEvery = time.Hour

// batchSize bounds the bodies applied in one transaction, so a sender on
// the same database waits at most one short transaction.
const batchSize = 128

// NewApplier returns an applier with policy p.
func NewApplier(l Ledger, p Policy, m *Metrics, log *slog.Logger) *Applier {
	if m == nil {
		m = NewMetrics()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Applier{
		ledger:  l,
		rules:   NewRules(p),
		metrics: m,
		log:     log,
		wake:    make(chan struct{}, 1),
		Poll:    time.Second,
		Gather:  100 * time.Millisecond,
	}
}

// Wake asks the applier to look at the inbox now. It never blocks.
func (a *Applier) Wake() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Drain applies everything in the inbox now and returns what it did.
// The inbound settings are read at every drain, so `wasend config set`
// reaches a running receiver at its next pass.
func (a *Applier) Drain(ctx context.Context) (campaign.ApplyReport, error) {
	var total campaign.ApplyReport
	set, err := a.ledger.InboundSettings(ctx)
	if err != nil {
		return total, err
	}
	in := a.inbound
	if a.settings == nil || !maps.Equal(set, a.settings) {
		if in, err = ParseInbound(set); err != nil {
			// config set refuses what does not parse; a value written some
			// other way keeps the defaults rather than stopping the receiver.
			a.log.Error("inbound settings unreadable: the defaults apply", "err", err)
			in = DefaultInbound()
		}
		a.settings, a.inbound = set, in
	}
	rules := a.rules.WithInbound(in)
	if now := a.ledger.Now(); now.Sub(a.pruned) >= pruneEvery || now.Before(a.pruned) {
		n, err := a.ledger.PruneInbound(ctx, now.Add(-in.Retention))
		if err != nil {
			return total, err
		}
		a.pruned = now
		if n > 0 {
			a.log.Info("inbound messages past their retention deleted", "count", n, "retention", in.Retention)
		}
	}
	for {
		rep, err := Drain(ctx, a.ledger, batchSize, rules)
		if err != nil {
			return total, err
		}
		a.note(rep)
		total.Add(rep)
		if rep.Bodies < batchSize {
			return total, nil
		}
	}
}

func (a *Applier) note(rep campaign.ApplyReport) {
	a.metrics.observe(rep)
	if rep.Bodies == 0 && rep.Statuses == 0 {
		return
	}
	if rep.Malformed > 0 {
		a.log.Warn("webhook bodies that are not notifications were kept and skipped", "count", rep.Malformed)
	}
	for _, why := range rep.Skips {
		a.log.Warn("a webhook status or event could not apply: kept with its body and skipped", "reason", why)
	}
	a.log.Info("webhooks applied", "bodies", rep.Bodies, "statuses", rep.Statuses, "duplicates", rep.Duplicates,
		"unmatched", rep.Unmatched, "adopted", rep.Adopted, "failed", rep.Failed, "rescheduled", rep.Rescheduled,
		"not_resent", rep.NotResent, "skipped", rep.Skipped)
	if rep.Paused > 0 || rep.Stopped > 0 {
		a.log.Warn("webhook events stopped sending", "campaigns_paused", rep.Paused, "accounts_stopped", rep.Stopped)
	}
	if rep.Inbound > 0 {
		a.log.Info("inbound messages kept", "count", rep.Inbound, "unknown", rep.InboundUnknown, "replies", rep.Replies,
			"opt_outs", rep.OptOuts, "opt_ins", rep.OptIns)
	}
	if a.OnApply != nil {
		a.OnApply(rep)
	}
}

// Run drains the inbox whenever woken (at most once every Gather) or
// every Poll until ctx ends.
func (a *Applier) Run(ctx context.Context) {
	for {
		last := time.Now()
		// A pass under way finishes even as ctx ends: it is one short
		// transaction per batch, and stopping applies the rest anyway.
		if _, err := a.Drain(context.WithoutCancel(ctx)); err != nil {
			// The bodies stay in the inbox; the next pass tries again.
			a.log.Error("applying webhooks", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
			if d := a.Gather - time.Since(last); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
		case <-time.After(a.Poll):
		}
	}
}
