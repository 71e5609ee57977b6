package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// slowAPI is the sandbox behind a server that holds every request for a
// while before answering, and notes in real time when each one arrived.
type slowAPI struct {
	mu       sync.Mutex
	arrivals []time.Time
}

func (s *slowAPI) after(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.arrivals {
		if a.After(t) {
			n++
		}
	}
	return n
}

// newSlowEnv is newEnv with an API that takes delay to answer each request
// after the first fast ones, one roomy account ("a", phone number id 1001)
// and n recipients.
func newSlowEnv(t *testing.T, fast int, delay time.Duration, faults sandbox.Faults, n int) (*env, *slowAPI, campaign.Campaign) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewSim(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(ctx, path, driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box := sandbox.New(sandbox.Options{Now: clk.Now, Throughput: -1, PairInterval: -1, Faults: faults})
	api := &slowAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.mu.Lock()
		api.arrivals = append(api.arrivals, time.Now())
		slow := len(api.arrivals) > fast
		api.mu.Unlock()
		if slow {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
			}
		}
		box.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: ctx, clock: clk, st: st, box: box, path: path,
		client: whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})}
	if err := st.SetTier(ctx, campaign.TierActive, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: 100000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierActive)
	return e, api, e.importN(n)
}

// TestCancelStartsNoRequest: after a cancel (Ctrl-C), claims already queued
// for the workers go back unsent; only requests already made finish. Before,
// every queued claim was still sent, up to a whole pool after the cancel.
func TestCancelStartsNoRequest(t *testing.T) {
	// The first request goes alone and is answered at once; then a pool.
	const workers, delay, sent = 8, 400 * time.Millisecond, 1 + 8
	e, api, c := newSlowEnv(t, 1, delay, sandbox.Faults{}, 100)
	ctx, cancel := context.WithCancel(e.ctx)
	cancelled := make(chan time.Time, 1)
	go func() {
		// Once the first pool is in flight, the next one is queued behind it.
		for api.after(time.Time{}) < sent && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancelled <- time.Now()
		cancel()
	}()
	if err := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: workers}}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	// A request the engine began just before the cancel may reach the
	// server a moment after it; a queued one would come a whole delay later.
	if n := api.after((<-cancelled).Add(delay / 4)); n != 0 {
		t.Errorf("%d requests started after the cancel, want none", n)
	}
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if counts[campaign.Sent] != sent || counts[campaign.Sending] != 0 || counts[campaign.Pending] != 100-sent {
		t.Errorf("counts %v, want the first and the %d requests in flight sent and every other row pending", counts, workers)
	}
	if got := len(e.box.Records()); got != sent {
		t.Errorf("the API saw %d requests, want %d", got, sent)
	}
	if used := e.usedToday("a"); used != sent {
		t.Errorf("used today %d, want %d: a claim put back unsent gives its quota back", used, sent)
	}
	for phone, r := range e.rows() {
		if r.state == campaign.Pending && r.retries != 0 {
			t.Errorf("%s: %+v, want no retry spent by a claim put back", phone, r)
		}
	}
}

// TestPauseStartsNoRequest: once the error-ratio rule pauses the campaign,
// claims already queued go back unsent instead of going out. The first 20
// requests fail at once, which pauses the campaign while the workers wait
// on slow ones with more claims queued behind them.
func TestPauseStartsNoRequest(t *testing.T) {
	const workers, delay = 8, 400 * time.Millisecond
	fail := map[string]int{}
	for i := range 60 {
		fail[fmtPhone(i)] = 131026
	}
	e, api, c := newSlowEnv(t, 20, delay, sandbox.Faults{FailNumbers: fail}, 60)
	var (
		mu       sync.Mutex
		pausedAt time.Time
	)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: workers, ErrorPauseRatio: 0.2}, Observe: func(ev dispatch.Event) {
		if ev.Kind == dispatch.EventPaused {
			mu.Lock()
			pausedAt = time.Now()
			mu.Unlock()
		}
	}})
	if err := eng.Run(e.ctx); !errors.Is(err, campaign.ErrPaused) {
		t.Fatalf("Run: %v, want ErrPaused", err)
	}
	expectPaused(t, e, c, "failed permanently")
	mu.Lock()
	defer mu.Unlock()
	if pausedAt.IsZero() {
		t.Fatal("no pause event")
	}
	if n := api.after(pausedAt.Add(delay / 4)); n != 0 {
		t.Errorf("%d requests started after the pause, want none", n)
	}
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(e.box.Records()); got != counts[campaign.Failed] || counts[campaign.Sending] != 0 {
		t.Errorf("the API saw %d requests; counts %v: want one failed row per request, the rest pending", got, counts)
	}
}

// fmtPhone is the i-th number importN writes.
func fmtPhone(i int) string { return fmt.Sprintf("+49151%08d", 10000000+i) }
