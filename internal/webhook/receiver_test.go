package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/wasend/wasend/internal/campaign"
)

var secret = []byte("app-secret-for-tests")

// startReceiver serves a receiver over real HTTP in front of f's store.
func startReceiver(t *testing.T, f *fixture) (*httptest.Server, *Metrics) {
	t.Helper()
	m := NewMetrics()
	r := NewReceiver(ReceiverConfig{Inbox: f.st, AppSecret: secret, VerifyToken: "verify-me", Metrics: m})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return srv, m
}

func TestVerificationHandshake(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	srv, m := startReceiver(t, f)
	tests := []struct {
		name     string
		query    url.Values
		want     int
		wantBody string
	}{
		{"right token", url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-me"}, "hub.challenge": {"1158201444"}}, 200, "1158201444"},
		{"wrong token", url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"guess"}, "hub.challenge": {"1"}}, 403, ""},
		{"no token", url.Values{"hub.mode": {"subscribe"}, "hub.challenge": {"1"}}, 403, ""},
		{"wrong mode", url.Values{"hub.mode": {"unsubscribe"}, "hub.verify_token": {"verify-me"}, "hub.challenge": {"1"}}, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(srv.URL + "/?" + tt.query.Encode())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			if resp.StatusCode != tt.want || (tt.want == 200 && b.String() != tt.wantBody) {
				t.Errorf("GET = %d %q, want %d %q", resp.StatusCode, b.String(), tt.want, tt.wantBody)
			}
		})
	}
	if n := counter(t, m.rejected.WithLabelValues("verify_token")); n != 3 {
		t.Errorf("rejected{verify_token} = %v, want 3", n)
	}
}

// Only signed JSON bodies of at most 1 MiB are stored, byte for byte;
// everything else is refused and changes nothing.
func TestNotificationsChecked(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	f.sent(t, 0)
	srv, m := startReceiver(t, f)
	good := f.body(status{status: "delivered", at: time.Second})
	// Meta signs escaped Unicode; the exact bytes must be kept.
	escaped := bytes.Replace(good, []byte(`"messaging_product":"whatsapp"`), []byte(`"messaging_product":"whatsapp","note":"caf\u00e9"`), 1)
	big := append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), MaxBody)...), `"}`...)
	tests := []struct {
		name   string
		body   []byte
		sig    string
		want   int
		reason string
	}{
		{"unsigned", good, "", 401, "unsigned"},
		{"forged", good, Sign([]byte("not-the-secret"), good), 401, "bad_signature"},
		{"signature of another body", good, Sign(secret, escaped), 401, "bad_signature"},
		{"not hex", good, "sha256=zz", 401, "bad_signature"},
		{"too large", big, Sign(secret, big), 400, "too_large"},
		{"not json", []byte("hello"), Sign(secret, []byte("hello")), 400, "not_json"},
		{"valid", escaped, Sign(secret, escaped), 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(tt.body))
			if tt.sig != "" {
				req.Header.Set(SignatureHeader, tt.sig)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("POST = %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.reason != "" {
				if n := counter(t, m.rejected.WithLabelValues(tt.reason)); n < 1 {
					t.Errorf("rejected{%s} = %v", tt.reason, n)
				}
			}
		})
	}
	if n, err := f.backlog(t); err != nil || n != 1 {
		t.Fatalf("inbox holds %d bodies (%v), want only the valid one", n, err)
	}
	if d := f.msg(t, 0); d.Delivery != "" {
		t.Fatalf("delivery %q before the applier ran", d.Delivery)
	}
	rep, err := f.ap.Drain(t.Context())
	if err != nil || rep.Bodies != 1 || rep.Malformed != 0 {
		t.Fatalf("drain = %+v, %v", rep, err)
	}
	if d := f.msg(t, 0); d.Delivery != campaign.DeliveryDelivered {
		t.Errorf("delivery %q, want delivered", d.Delivery)
	}
	if n := counter(t, f.ap.metrics.events.WithLabelValues("delivered")); n != 1 {
		t.Errorf("events{delivered} = %v, want 1", n)
	}
}

func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// heldClock's timers fire when the test says: After reports that a timer
// started (started) and returns fire.
type heldClock struct {
	started chan time.Duration
	fire    chan time.Time
}

func (heldClock) Now() time.Time { return time.Now() }
func (c heldClock) After(d time.Duration) <-chan time.Time {
	c.started <- d
	return c.fire
}

// countingInbox records the size of every commit.
type countingInbox struct {
	Inbox
	mu      sync.Mutex
	commits []int
}

func (c *countingInbox) AddToInbox(ctx context.Context, bodies [][]byte) error {
	c.mu.Lock()
	c.commits = append(c.commits, len(bodies))
	c.mu.Unlock()
	return c.Inbox.AddToInbox(ctx, bodies)
}

// Bodies that come while the committer lingers after the first share its
// commit; none is answered before that commit is durable.
func TestReceiverLingersForMoreBodies(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	in := &countingInbox{Inbox: f.st}
	clk := heldClock{started: make(chan time.Duration, 1), fire: make(chan time.Time, 1)}
	r := NewReceiver(ReceiverConfig{Inbox: in, AppSecret: secret, Linger: 5 * time.Millisecond, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	body := f.body(status{row: 0, status: "delivered", at: time.Second})
	reqs := make([]storeReq, 10)
	for i := range reqs {
		reqs[i] = storeReq{body: body, done: make(chan error, 1)}
	}
	r.queue <- reqs[0]
	if d := <-clk.started; d != 5*time.Millisecond {
		t.Fatalf("lingered %v, want the 5ms configured", d)
	}
	for _, q := range reqs[1:] {
		r.queue <- q
	}
	for len(r.queue) > 0 { // the committer takes them while it lingers
		runtime.Gosched()
	}
	for _, q := range reqs {
		select {
		case err := <-q.done:
			t.Fatalf("a body was answered (%v) before the linger ended", err)
		default:
		}
	}
	clk.fire <- time.Now()
	for i, q := range reqs {
		if err := <-q.done; err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !slices.Equal(in.commits, []int{10}) {
		t.Errorf("commits of %v bodies, want one of 10", in.commits)
	}
}
