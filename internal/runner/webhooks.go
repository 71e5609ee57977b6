package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/metrics"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/webhook"
)

// ReceiverOptions are how a webhook receiver listens and applies, for
// webhook serve and for the receiver a run serves beside sending.
type ReceiverOptions struct {
	Addr, Path string
	// AppSecret checks each body's signature; VerifyToken answers the
	// verification handshake. Never stored, logged or printed.
	AppSecret   []byte
	VerifyToken string
	Policy      webhook.Policy
	Log         *slog.Logger
	// OptedOut, when set, is called after a pass in which inbound
	// messages suppressed numbers (the shared list's sync wakes).
	OptedOut func()
}

// Receiver is a webhook receiver serving, with its applier, beside other
// work.
type Receiver struct {
	Addr    string // where it listens
	metrics *webhook.Metrics
	stop    func() error
}

// StartReceiver serves the receiver on o.Addr, with its applier, until
// Stop.
func StartReceiver(ctx context.Context, st driver.Driver, o ReceiverOptions) (*Receiver, error) {
	wm := webhook.NewMetrics()
	ap := webhook.NewApplier(st, o.Policy, wm, o.Log)
	if o.OptedOut != nil {
		ap.OnApply = func(rep campaign.ApplyReport) {
			if rep.OptOuts > 0 {
				o.OptedOut()
			}
		}
	}
	rc := webhook.NewReceiver(webhook.ReceiverConfig{Inbox: st, AppSecret: o.AppSecret, VerifyToken: o.VerifyToken,
		Metrics: wm, Log: o.Log, Stored: ap.Wake})
	srv := &webhook.Server{Receiver: rc, Applier: ap, Path: o.Path}
	addr, stop, err := srv.Start(ctx, o.Addr)
	if err != nil {
		return nil, err
	}
	return &Receiver{Addr: addr, metrics: wm, stop: stop}, nil
}

// Stop ends the receiver and its applier after applying what was stored.
func (r *Receiver) Stop() error { return r.stop() }

// ServeMetrics serves the Prometheus metrics of st's campaigns, and the
// counters of r when given, on addr until ctx ends or stop is called.
func ServeMetrics(ctx context.Context, st driver.Driver, addr string, r *Receiver) (bound string, stop func() error, err error) {
	m := metrics.New(st)
	if r != nil {
		if err := r.metrics.Register(m.Registerer()); err != nil {
			return "", nil, fmt.Errorf("webhook metrics: %w", err)
		}
	}
	return m.Serve(ctx, addr)
}

// RunWebhooks is the receiver a run serves beside sending: on
// --webhook-addr, and always with the sandbox, whose stand-in then posts
// its status webhooks to it.
type RunWebhooks struct {
	Addr string // "": a free loopback port (for the sandbox only)
	Path string
	// NoReschedule fails messages a 131049 status reports instead of
	// sending them again a day later.
	NoReschedule bool
	// Secrets gives the app secret and verify token when the receiver
	// starts; its error stops the run before anything is sent.
	Secrets func() (appSecret []byte, verifyToken string, err error)
	// Sandbox is how the sandbox posts its statuses; the receiver's URL
	// and the secret are filled in.
	Sandbox sandbox.WebhookOptions
}

// startRunWebhooks starts the run's receiver, when one is asked for, and
// says how the sandbox is to post to it.
func startRunWebhooks(ctx context.Context, o Options) (*Receiver, sandbox.Options, error) {
	w := o.Webhooks
	if w == nil {
		return nil, sandbox.Options{}, nil
	}
	secret, verify, err := w.Secrets()
	if err != nil {
		return nil, sandbox.Options{}, err
	}
	addr := w.Addr
	if addr == "" && o.API.Sandbox {
		addr = "127.0.0.1:0"
	}
	r, err := StartReceiver(ctx, o.Store, ReceiverOptions{Addr: addr, Path: w.Path, AppSecret: secret, VerifyToken: verify,
		Policy: webhook.Policy{NoReschedule: w.NoReschedule, Restriction: o.Policy.Restriction}, Log: o.Logger})
	if err != nil {
		return nil, sandbox.Options{}, err
	}
	var sb sandbox.Options
	if o.API.Sandbox {
		sb.Webhooks = w.Sandbox
		sb.Webhooks.URL, sb.Webhooks.AppSecret = "http://"+r.Addr+w.Path, secret
	}
	if w.Addr != "" {
		o.IO.Infof("receiving webhooks on http://%s%s", r.Addr, w.Path)
	}
	return r, sb, nil
}

// rescheduledWait: a run ends rather than wait longer than this for rows
// to be retried — rows a status webhook's 131049 rescheduled a day later.
// Backoff waits a minute at most, a pair throttle about an hour.
const rescheduledWait = 2 * time.Hour
