package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wasend/wasend/internal/campaign"
	claimpkg "github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/metrics"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// scrape fetches /metrics over real HTTP and parses the text format.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func serve(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	addr, stop, err := m.Serve(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return addr
}

// find returns the metric of family name whose labels are exactly labels
// ("k=v", …), or nil.
func find(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		if strings.Join(got, ",") == strings.Join(labels, ",") {
			return m
		}
	}
	return nil
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	m := find(fams, name, labels...)
	if m == nil {
		t.Fatalf("no %s{%s}", name, strings.Join(labels, ","))
	}
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s{%s} is neither counter nor gauge", name, strings.Join(labels, ","))
	return 0
}

func claim(account string, at time.Time) campaign.Claim {
	return campaign.Claim{
		Message: campaign.Message{ID: 1, CampaignID: 1, Line: 2},
		Account: campaign.Account{ID: 1, Name: account, TokenEnv: "WA_TOKEN"},
		At:      at,
	}
}

func TestObserveCounts(t *testing.T) {
	m := metrics.New(nil)
	sent := dispatch.Event{Kind: dispatch.EventSent, At: t0.Add(300 * time.Millisecond), Claim: claim("main-01", t0),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, Class: "ok", WAMID: "wamid.1"}}
	throttled := dispatch.Event{Kind: dispatch.EventRetry, At: t0.Add(2 * time.Second), Claim: claim("fresh-02", t0),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "throttled", ErrorCode: 130429,
			Throttle: &campaign.Throttle{Cooldown: 30 * time.Second}}}
	events := []dispatch.Event{
		throttled,
		{Kind: dispatch.EventAccount, At: throttled.At, Claim: throttled.Claim, Outcome: throttled.Outcome}, // not a second throttle
		{Kind: dispatch.EventRetry, At: t0.Add(time.Second), Claim: claim("fresh-02", t0),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, Class: "pair-throttled", ErrorCode: 131056}},
		// Put back without a request: counted by outcome, not timed.
		{Kind: dispatch.EventRetry, At: t0, Claim: claim("fresh-02", t0),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, Refund: true}},
		{Kind: dispatch.EventFailed, At: t0.Add(time.Second), Claim: claim("main-01", t0),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, Class: "permanent", ErrorCode: 131026}},
		{Kind: dispatch.EventUnknown, At: t0.Add(time.Second), Claim: claim("main-01", t0),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeUnknown, Class: "ambiguous"}},
		{Kind: dispatch.EventWait, At: t0, Wait: &campaign.WaitError{Reason: campaign.WaitTokens}},
		{Kind: dispatch.EventResumed, At: t0},
		{Kind: dispatch.EventPaused, At: t0, Outcome: campaign.Outcome{Pause: "error 132001"}},
	}
	// The engine calls Observe from its recorder and its claim loop at once.
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { m.Observe(sent) })
	}
	for _, ev := range events {
		wg.Go(func() { m.Observe(ev) })
	}
	wg.Wait()

	fams := scrape(t, serve(t, m))
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"wasend_sends_total", []string{"account=main-01", "class=ok"}, 10},
		{"wasend_sends_total", []string{"account=main-01", "class=permanent"}, 1},
		{"wasend_sends_total", []string{"account=main-01", "class=ambiguous"}, 1},
		{"wasend_sends_total", []string{"account=fresh-02", "class=throttled"}, 1},
		{"wasend_sends_total", []string{"account=fresh-02", "class=pair-throttled"}, 1},
		{"wasend_sends_total", []string{"account=fresh-02", "class=retry"}, 1},
		{"wasend_throttles_total", []string{"account=fresh-02", "code=130429"}, 1},
		{"wasend_throttles_total", []string{"account=fresh-02", "code=131056"}, 1},
		{"wasend_retries_total", []string{"account=fresh-02"}, 3},
	} {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	if find(fams, "wasend_retries_total", "account=main-01") != nil {
		t.Error("main-01 has retries; it had none")
	}

	h := find(fams, "wasend_request_duration_seconds", "account=main-01").GetHistogram()
	if h.GetSampleCount() != 12 || !approx(h.GetSampleSum(), 10*0.3+2) {
		t.Errorf("main-01 durations: count %d sum %v, want 12 and 5", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == 0.5 && b.GetCumulativeCount() != 10 {
			t.Errorf("main-01 le=0.5: %d, want the 10 sends of 0.3 s", b.GetCumulativeCount())
		}
	}
	h = find(fams, "wasend_request_duration_seconds", "account=fresh-02").GetHistogram()
	if h.GetSampleCount() != 2 || !approx(h.GetSampleSum(), 3) {
		t.Errorf("fresh-02 durations: count %d sum %v, want 2 and 3 (the unsent retry is not timed)", h.GetSampleCount(), h.GetSampleSum())
	}
	if fams["go_goroutines"] == nil || fams["wasend_store_up"] != nil {
		t.Error("want the Go collector and, without a Source, no store gauges")
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestServeOnlyMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	m := metrics.New(nil)
	addr, stop, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/metrics": 200, "/": 404, "/debug/pprof/": 404} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if _, _, err := m.Serve(ctx, addr); err == nil {
		t.Error("Serve on a taken address: no error")
	}
	cancel() // ending ctx stops the server
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still answers after ctx ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Errorf("stop after ctx ended: %v", err)
	}
}

// openStore is a real database whose clock stands still at t0.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// importN stores a campaign of n recipients through the store's importer
// (runner.Import does the same after reading a CSV).
func importN(t *testing.T, st *store.Store, n int) campaign.Campaign {
	t.Helper()
	ctx := t.Context()
	im, err := st.Import(ctx, campaign.Campaign{
		Name: "m", Fingerprint: fmt.Sprint("m-", n), Source: "m.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US", Params: []string{"name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		phone := fmt.Sprintf("+49151%08d", 10000000+i)
		why, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: phone, Phone: phone, Params: []string{fmt.Sprint("Person ", i)}})
		if err != nil || why != "" {
			t.Fatalf("add %s: %q %v", phone, why, err)
		}
	}
	c, err := im.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGaugesFromStore(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	for _, a := range []campaign.Account{
		{Name: "main-01", PhoneNumberID: "1", Tier: campaign.TierActive, TokenEnv: "T"},
		{Name: "fresh-02", PhoneNumberID: "2", Tier: campaign.TierNew, TokenEnv: "T"},
	} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// A disabled account is still exposed; it just isn't chosen.
	disabled := true
	if _, err := st.UpdateAccount(ctx, "fresh-02", campaign.AccountChange{Disabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	c := importN(t, st, 5)
	const rn = "test-runner"
	if err := st.RegisterRunner(ctx, campaign.Runner{ID: rn, CampaignID: c.ID, Host: "h", PID: 1, StartedAt: t0, HeartbeatAt: t0}); err != nil {
		t.Fatal(err)
	}
	claims, err := claimpkg.New(st).ClaimN(ctx, c.ID, rn, t0, 3)
	if err != nil || len(claims) != 3 {
		t.Fatalf("claimed %d: %v", len(claims), err)
	}
	// One sent, one throttled (back to pending, quota refunded, the
	// reaction halving the rate).
	err = st.RecordAll(ctx, rn, []campaign.Result{
		{Claim: claims[0], At: t0, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"}},
		{Claim: claims[1], At: t0, Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0, Refund: true,
			Class: "throttled", ErrorCode: 130429, Throttle: &campaign.Throttle{Cooldown: 30 * time.Second}, RateFactor: 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}

	m := metrics.New(st)
	m.Watch(c.ID)
	m.Watch(c.ID) // watching twice exposes it once
	fams := scrape(t, serve(t, m))
	id := fmt.Sprint("campaign=", c.ID)
	for _, g := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"wasend_tokens_available", []string{"account=main-01"}, 12},
		{"wasend_daily_used", []string{"account=main-01"}, 2},
		{"wasend_daily_cap", []string{"account=main-01"}, 300},
		{"wasend_effective_rate", []string{"account=main-01"}, 0.1}, // 1/5 s halved
		{"wasend_tokens_available", []string{"account=fresh-02"}, 5},
		{"wasend_daily_used", []string{"account=fresh-02"}, 0},
		{"wasend_daily_cap", []string{"account=fresh-02"}, 50},
		{"wasend_effective_rate", []string{"account=fresh-02"}, 1.0 / 12},
		{"wasend_queue_depth", []string{id, "state=pending"}, 3},
		{"wasend_queue_depth", []string{id, "state=sending"}, 1},
		{"wasend_queue_depth", []string{id, "state=sent"}, 1},
		{"wasend_queue_depth", []string{id, "state=failed"}, 0},
		{"wasend_queue_depth", []string{id, "state=unknown"}, 0},
		{"wasend_store_up", nil, 1},
	} {
		if got := value(t, fams, g.name, g.labels...); !approx(got, g.want) {
			t.Errorf("%s{%s} = %v, want %v", g.name, strings.Join(g.labels, ","), got, g.want)
		}
	}
	if n := len(fams["wasend_queue_depth"].GetMetric()); n != len(campaign.States) {
		t.Errorf("%d queue depth series, want %d", n, len(campaign.States))
	}
}

// failingSource fails every query, and remembers whether it was given a
// deadline.
type failingSource struct {
	mu          sync.Mutex
	hadDeadline bool
}

func (f *failingSource) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	f.note(ctx)
	return nil, errors.New("database is locked")
}

func (f *failingSource) Counts(ctx context.Context, id int64) (campaign.Counts, error) {
	f.note(ctx)
	return nil, context.DeadlineExceeded
}

func (f *failingSource) note(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := ctx.Deadline()
	f.hadDeadline = ok && time.Until(d) <= metrics.ScrapeTimeout
}

func TestStoreDownKeepsCounters(t *testing.T) {
	src := &failingSource{}
	m := metrics.New(src)
	m.Watch(7)
	m.Observe(dispatch.Event{Kind: dispatch.EventSent, At: t0, Claim: claim("main-01", t0),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, Class: "ok"}})
	fams := scrape(t, serve(t, m))
	if got := value(t, fams, "wasend_store_up"); got != 0 {
		t.Errorf("wasend_store_up = %v, want 0", got)
	}
	if got := value(t, fams, "wasend_sends_total", "account=main-01", "class=ok"); got != 1 {
		t.Errorf("sends = %v, want 1", got)
	}
	if fams["wasend_tokens_available"] != nil || fams["wasend_queue_depth"] != nil {
		t.Error("gauges exposed although the store failed")
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if !src.hadDeadline {
		t.Errorf("store queried without a deadline of at most %s", metrics.ScrapeTimeout)
	}
}

// okSender accepts every message.
type okSender struct{ n atomic.Int64 }

func (s *okSender) Send(context.Context, whatsapp.Request) (whatsapp.Response, error) {
	return whatsapp.Response{WAMID: fmt.Sprint("wamid.", s.n.Add(1))}, nil
}

// TestEngineObserve wires Observe into a real engine, as the runner does.
func TestEngineObserve(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wasend.db"), driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.AddAccount(ctx, campaign.Account{Name: "main-01", PhoneNumberID: "1", Tier: campaign.TierActive, TokenEnv: "T"}); err != nil {
		t.Fatal(err)
	}
	c := importN(t, st, 6)
	m := metrics.New(st)
	m.Watch(c.ID)
	eng, err := dispatch.New(dispatch.Options{Campaign: c, Ledger: claimpkg.New(st), Sender: &okSender{},
		Runner: campaign.Runner{ID: "r1", Host: "h", PID: 1}, Policy: dispatch.Policy{Workers: 3}, Observe: m.Observe})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serve(t, m))
	id := fmt.Sprint("campaign=", c.ID)
	if got := value(t, fams, "wasend_sends_total", "account=main-01", "class=ok"); got != 6 {
		t.Errorf("sends = %v, want 6", got)
	}
	if got := value(t, fams, "wasend_queue_depth", id, "state=sent"); got != 6 {
		t.Errorf("sent = %v, want 6", got)
	}
	if got := value(t, fams, "wasend_daily_used", "account=main-01"); got != 6 {
		t.Errorf("daily used = %v, want 6", got)
	}
	if n := find(fams, "wasend_request_duration_seconds", "account=main-01").GetHistogram().GetSampleCount(); n != 6 {
		t.Errorf("%d durations, want 6", n)
	}
}
