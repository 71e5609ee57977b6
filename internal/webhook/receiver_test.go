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
	"sync/atomic"
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

// Only signed bodies of at most 1 MiB are stored, byte for byte;
// everything else is refused and changes nothing. A signed body that is not
// a notification is kept and skipped by the applier.
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
		// Reading it is the applier's: kept, and skipped there.
		{"signed, not json", []byte("hello"), Sign(secret, []byte("hello")), 200, ""},
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
	if n, err := f.backlog(t); err != nil || n != 2 {
		t.Fatalf("inbox holds %d bodies (%v), want only the two signed ones", n, err)
	}
	if d := f.msg(t, 0); d.Delivery != "" {
		t.Fatalf("delivery %q before the applier ran", d.Delivery)
	}
	rep, err := f.ap.Drain(t.Context())
	if err != nil || rep.Bodies != 2 || rep.Malformed != 1 {
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

// heldClock's time is what the test sets (at); its timers fire when the
// test says: After reports that a timer started (started) and returns fire.
type heldClock struct {
	at      *atomic.Int64 // nanoseconds after t0
	started chan time.Duration
	fire    chan time.Time
}

func (c heldClock) Now() time.Time { return t0.Add(time.Duration(c.at.Load())) }
func (c heldClock) After(d time.Duration) <-chan time.Time {
	c.started <- d
	return c.fire
}

// heldInbox holds every commit until the test releases it, and records
// each commit's size.
type heldInbox struct {
	Inbox
	started chan int      // a commit began, of this many bodies
	release chan struct{} // lets one commit go on
	quit    chan struct{} // closed: the test ended, nothing is held
	mu      sync.Mutex
	commits []int
}

func newHeldInbox(in Inbox) *heldInbox {
	return &heldInbox{Inbox: in, started: make(chan int), release: make(chan struct{}), quit: make(chan struct{})}
}

func (h *heldInbox) AddToInbox(ctx context.Context, bodies [][]byte) error {
	select {
	case h.started <- len(bodies):
		select {
		case <-h.release:
		case <-h.quit:
		}
	case <-h.quit:
	}
	h.mu.Lock()
	h.commits = append(h.commits, len(bodies))
	h.mu.Unlock()
	return h.Inbox.AddToInbox(ctx, bodies)
}

// runHeld runs r's committer over in until the test ends.
func runHeld(t *testing.T, r *Receiver, in *heldInbox) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { close(in.quit); cancel(); <-done })
}

// poster stores copies of body through r, n at once (post), each waiting
// for its commit; their answers come on answered.
func poster(t *testing.T, r *Receiver, body []byte) (post func(n int), answered chan error) {
	answered = make(chan error, 16)
	return func(n int) {
		for range n {
			go func() { _, err := r.store(t.Context(), slices.Clone(body), nil); answered <- err }()
		}
	}, answered
}

// waitOpen waits until r's next commit holds want bodies.
func waitOpen(r *Receiver, want int) {
	for {
		r.mu.Lock()
		n := len(r.open.bodies)
		r.mu.Unlock()
		if n == want {
			return
		}
		runtime.Gosched()
	}
}

// A body that comes alone is committed at once; the bodies that come
// while a commit runs share the next one, and none is answered before
// its own commit ended.
func TestReceiverCommitsWhatCameMeanwhile(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	in := newHeldInbox(f.st)
	r := NewReceiver(ReceiverConfig{Inbox: in, AppSecret: secret, MaxBatch: 4, Linger: -1})
	runHeld(t, r, in)
	post, answered := poster(t, r, f.body(status{row: 0, status: "delivered", at: time.Second}))
	post(1)
	if n := <-in.started; n != 1 {
		t.Fatalf("the first commit took %d bodies, want the one that came", n)
	}
	post(9)
	// Four join the next commit (MaxBatch), the rest wait for the ones after.
	waitOpen(r, 4)
	select {
	case err := <-answered:
		t.Fatalf("a body was answered (%v) before its commit ended", err)
	default:
	}
	// Each commit released, the next takes what joined meanwhile.
	for _, step := range []struct{ commit, next int }{{4, 4}, {4, 1}, {1, 0}} {
		in.release <- struct{}{}
		if n := <-in.started; n != step.commit {
			t.Fatalf("a commit took %d bodies, want %d", n, step.commit)
		}
		waitOpen(r, step.next)
	}
	in.release <- struct{}{}
	for i := range 10 {
		if err := <-answered; err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
	}
	if n, err := f.backlog(t); err != nil || n != 10 {
		t.Fatalf("inbox holds %d bodies (%v), want 10", n, err)
	}
}

// A body after a quiet spell is committed at once; one that came during
// the last commit or within Linger of its end waits for company, at most
// Linger from its arrival, and less once its group is full.
func TestReceiverLingersWhenBusy(t *testing.T) {
	f := newFixture(t, 1, Policy{})
	in := newHeldInbox(f.st)
	clk := heldClock{at: new(atomic.Int64), started: make(chan time.Duration, 1), fire: make(chan time.Time, 1)}
	r := NewReceiver(ReceiverConfig{Inbox: in, AppSecret: secret, MaxBatch: 4, Linger: 5 * time.Millisecond, Clock: clk})
	runHeld(t, r, in)
	post, answered := poster(t, r, f.body(status{row: 0, status: "delivered", at: time.Second}))
	at := func(ms int) { clk.at.Store(int64(ms) * int64(time.Millisecond)) }
	commit := func(want int) {
		t.Helper()
		select {
		case n := <-in.started:
			if n != want {
				t.Fatalf("a commit took %d bodies, want %d", n, want)
			}
		case d := <-clk.started:
			t.Fatalf("lingered %v, want a commit of %d at once", d, want)
		}
	}
	lingered := func(want time.Duration) {
		t.Helper()
		select {
		case d := <-clk.started:
			if d != want {
				t.Fatalf("lingered %v, want %v", d, want)
			}
		case n := <-in.started:
			t.Fatalf("a commit of %d bodies began at once, want a wait of %v", n, want)
		}
	}
	noTimer := func() {
		t.Helper()
		select {
		case d := <-clk.started:
			t.Fatalf("lingered %v after a quiet spell", d)
		default:
		}
	}

	// release lets the commit under way end and waits for its n answers,
	// so that it ended at the time set before.
	release := func(n int) {
		t.Helper()
		in.release <- struct{}{}
		for range n {
			if err := <-answered; err != nil {
				t.Fatal(err)
			}
		}
	}

	post(1)
	commit(1) // the first: at once
	noTimer()
	post(2) // during the commit
	waitOpen(r, 2)
	at(2)
	release(1) // ends at 2 ms; the two came at 0: 3 ms left to wait
	lingered(3 * time.Millisecond)
	post(1) // comes while they wait
	waitOpen(r, 3)
	clk.fire <- time.Now()
	commit(3)
	at(50)
	release(3)
	at(100) // 50 ms after the last commit: a quiet spell
	post(1)
	commit(1)
	noTimer()
	at(101)
	release(1)
	at(103) // 2 ms after the last commit: posts are coming fast
	post(1)
	lingered(5 * time.Millisecond)
	post(3) // fills the group: no need to wait longer
	commit(4)
	release(4)
}
