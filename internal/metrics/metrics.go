// Package metrics exposes wasend's sending in the Prometheus text format:
// counters fed by the send engine's events, and gauges read from the store
// when Prometheus scrapes, so they are true at that moment even when other
// processes share the database.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/whatsapp"
)

// Source is what the scrape-time gauges read. *store.Store is one.
type Source interface {
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Counts(ctx context.Context, campaignID int64) (campaign.Counts, error)
}

// ScrapeTimeout bounds the store queries of one scrape: a database locked
// by a long import must not hang Prometheus.
const ScrapeTimeout = 2 * time.Second

// Metrics holds wasend's collectors in a registry of its own, so nothing
// else in the process (or a library's init) adds to what is exposed.
type Metrics struct {
	reg       *prometheus.Registry
	sends     *prometheus.CounterVec
	throttles *prometheus.CounterVec
	retries   *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	state     *stateCollector
}

// New returns metrics whose gauges read src at scrape time; src may be nil
// for counters only.
func New(src Source) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_sends_total",
			Help: "Send attempts recorded, by account and outcome class (the Cloud API answer's class, or the outcome when no request was made).",
		}, []string{"account", "class"}),
		throttles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_throttles_total",
			Help: "Throttling answers (account or recipient pair), by account and Graph error code.",
		}, []string{"account", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_retries_total",
			Help: "Messages put back to pending for another attempt, by account.",
		}, []string{"account"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wasend_request_duration_seconds",
			Help:    "Time from claiming a message to knowing its outcome, by account.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"account"}),
		state: &stateCollector{src: src},
	}
	m.reg.MustRegister(m.sends, m.throttles, m.retries, m.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src != nil {
		m.reg.MustRegister(m.state)
	}
	return m
}

// Registerer adds collectors of other packages (the webhook receiver's
// counters) to what is exposed.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Watch adds a campaign whose queue depth is exposed.
func (m *Metrics) Watch(campaignID int64) { m.state.watch(campaignID) }

var outcomeNames = map[dispatch.EventKind]string{
	dispatch.EventSent: "sent", dispatch.EventRetry: "retry",
	dispatch.EventFailed: "failed", dispatch.EventUnknown: "unknown",
}

var throttleClasses = []string{whatsapp.ClassThrottled.String(), whatsapp.ClassPairThrottled.String()}

// Observe counts one engine event. It is safe for concurrent use and does
// not block, so it can be (part of) dispatch.Options.Observe.
func (m *Metrics) Observe(ev dispatch.Event) {
	outcome, ok := outcomeNames[ev.Kind]
	if !ok {
		// State changes (waits, account effects, pauses) are not counted:
		// their send outcome already was.
		return
	}
	account, out := ev.Claim.Account.Name, ev.Outcome
	class := out.Class
	if class == "" {
		class = outcome
	}
	m.sends.WithLabelValues(account, class).Inc()
	if slices.Contains(throttleClasses, out.Class) {
		m.throttles.WithLabelValues(account, strconv.Itoa(out.ErrorCode)).Inc()
	}
	if ev.Kind == dispatch.EventRetry {
		m.retries.WithLabelValues(account).Inc()
	}
	// No class: the engine put the row back without a request.
	if out.Class != "" && !ev.Claim.At.IsZero() && !ev.At.Before(ev.Claim.At) {
		m.duration.WithLabelValues(account).Observe(ev.At.Sub(ev.Claim.At).Seconds())
	}
}

// Handler serves the registry in the Prometheus exposition formats. A store
// that does not answer costs the gauges of that scrape, not the counters.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // promhttp_metric_handler_errors_total
	})
}

// Serve serves Handler at /metrics on addr (":9090", "127.0.0.1:0") until
// ctx ends or stop is called. It returns the address bound. stop shuts the
// server down, waiting briefly for scrapes in progress, and may be called
// more than once.
func (m *Metrics) Serve(ctx context.Context, addr string) (boundAddr string, stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var serveErr error
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveErr = srv.Serve(ln)
	}()

	var (
		once    sync.Once
		stopErr error
	)
	stop = func() error {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if stopErr = srv.Shutdown(sctx); stopErr != nil {
				srv.Close() // scrapes still running past the grace period
			}
			<-served
			if stopErr == nil && !errors.Is(serveErr, http.ErrServerClosed) {
				stopErr = serveErr
			}
		})
		return stopErr
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = stop()
		case <-served:
		}
	}()
	return ln.Addr().String(), stop, nil
}
