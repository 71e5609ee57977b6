package webhook

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasend/wasend/internal/campaign"
)

// Metrics counts what the receiver and applier did, for Prometheus.
type Metrics struct {
	received prometheus.Counter
	rejected *prometheus.CounterVec
	events   *prometheus.CounterVec
	inbound  *prometheus.CounterVec
}

// NewMetrics returns unregistered counters; Register exposes them.
func NewMetrics() *Metrics {
	return &Metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasend_webhook_bodies_total",
			Help: "Signed webhook bodies stored in the inbox.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_webhook_rejected_total",
			Help: "Webhook requests refused, by reason (unsigned, bad_signature, verify_token, too_large, …).",
		}, []string{"reason"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_webhook_events_total",
			Help: "Status events applied, by status (sent, delivered, read, failed), plus duplicate, unmatched and skipped (could not apply) ones.",
		}, []string{"status"}),
		inbound: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasend_webhook_inbound_total",
			Help: "Inbound messages kept, by what they were: message (all), unknown (a type wasend does not read), reply, opt_out, opt_in.",
		}, []string{"kind"}),
	}
}

// Register adds the counters to reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.received, m.rejected, m.events, m.inbound} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// observe counts one applier pass.
func (m *Metrics) observe(rep campaign.ApplyReport) {
	for st, n := range rep.ByStatus {
		m.events.WithLabelValues(string(st)).Add(float64(n))
	}
	if rep.Duplicates > 0 {
		m.events.WithLabelValues("duplicate").Add(float64(rep.Duplicates))
	}
	if rep.Unmatched > 0 {
		m.events.WithLabelValues("unmatched").Add(float64(rep.Unmatched))
	}
	if rep.Skipped > 0 {
		m.events.WithLabelValues("skipped").Add(float64(rep.Skipped))
	}
	for kind, n := range map[string]int{"message": rep.Inbound, "unknown": rep.InboundUnknown, "reply": rep.Replies,
		"opt_out": rep.OptOuts, "opt_in": rep.OptIns} {
		if n > 0 {
			m.inbound.WithLabelValues(kind).Add(float64(n))
		}
	}
}
