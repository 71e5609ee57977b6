package dispatch_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/whatsapp"
)

// outageEnv is an env whose client talks to a port nobody listens on
// until up() starts the sandbox there.
type outageEnv struct {
	*env
	addr string
	mu   sync.Mutex
	srv  *httptest.Server
}

func newOutageEnv(t *testing.T, start time.Time) *outageEnv {
	t.Helper()
	e := newEnv(t, start, sandbox.Faults{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &outageEnv{env: e, addr: l.Addr().String()}
	l.Close() // refused from now on
	e.client = whatsapp.New(whatsapp.Config{BaseURL: "http://" + o.addr, Timeout: 5 * time.Second})
	t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.srv != nil {
			o.srv.Close()
		}
	})
	return o
}

// up starts the sandbox on the refused port.
func (o *outageEnv) up() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		return
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		o.t.Errorf("listen again on %s: %v", o.addr, err)
		return
	}
	o.srv = httptest.NewUnstartedServer(o.box)
	o.srv.Listener.Close()
	o.srv.Listener = l
	o.srv.Start()
}

func (o *outageEnv) probe(ctx context.Context) error {
	_, err := o.client.PhoneNumber(ctx, "100000000000001", "test-token")
	return err
}

// TestOutageBurnsNothing: the API refuses connections for five minutes,
// then answers. The engine stops claiming, probes with backoff, resumes,
// and sends everything: nothing failed, no retry budget spent beyond the
// first failure, the outage shown while it lasts and cleared after.
func TestOutageBurnsNothing(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newOutageEnv(t, start)
	e.addAccount("one", "100000000000001", campaign.TierActive)
	e.addAccount("two", "100000000000002", campaign.TierActive)
	c := e.importN(20)
	e.clock.OnAdvance = func(_, to time.Time) {
		if to.Sub(start) >= 5*time.Minute {
			e.up()
		}
	}
	var (
		mu              sync.Mutex
		outages, resume int
		seen            campaign.Outage
	)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 4, MaxAttempts: 2}, Probe: e.probe, Observe: func(ev dispatch.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case dispatch.EventOutage:
			outages++
			if o, err := readmodel.New(e.st).Outage(e.ctx, c.ID); err == nil && !o.Since.IsZero() {
				seen = o
			}
		case dispatch.EventResumed:
			resume++
		}
	}})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	rows := e.rows()
	retries := 0
	for _, r := range rows {
		if r.state != campaign.Sent {
			t.Errorf("%s: %s (%s), want sent", r.phone, r.state, r.errorMsg.String)
		}
		retries += r.retries
	}
	if retries > 2 {
		t.Errorf("%d retries spent in all; an outage may cost at most the two failures before it is recognised", retries)
	}
	if outages == 0 || resume == 0 {
		t.Errorf("%d outage and %d resumed events, want both", outages, resume)
	}
	// Each attempt says whether it spent a retry: the row's failures before
	// the outage was recognised are transient, those after it outage.
	classes := e.attemptClasses()
	if classes["transient"] != retries || classes[dispatch.ClassOutage] == 0 {
		t.Errorf("attempt classes %v with %d retries spent: want one transient attempt per retry and the rest outage", classes, retries)
	}
	if seen.Since.IsZero() || seen.Since.After(start.Add(time.Second)) || seen.Error == "" {
		t.Errorf("outage recorded for status: %+v, want one since the start with the error", seen)
	}
	if o, err := readmodel.New(e.st).Outage(e.ctx, c.ID); err != nil || !o.Since.IsZero() {
		t.Errorf("after the run the outage is still recorded: %+v, %v", o, err)
	}
	if took := e.clock.Now().Sub(start); took > 5*time.Minute+2*time.Minute {
		t.Errorf("finished %v after the start; the API was back after 5m and the backoff is at most 1m", took)
	}
}

// TestOutageFailsNoRowOnItsLastAttempt: with one attempt per row, the
// failures before the breaker trips would each give a row up; an outage
// still fails nothing, as a probe decides before a row is given up.
func TestOutageFailsNoRowOnItsLastAttempt(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newOutageEnv(t, start)
	e.addAccount("one", "100000000000001", campaign.TierActive)
	e.addAccount("two", "100000000000002", campaign.TierActive)
	c := e.importN(10)
	e.clock.OnAdvance = func(_, to time.Time) {
		if to.Sub(start) >= 2*time.Minute {
			e.up()
		}
	}
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2, MaxAttempts: 1}, Probe: e.probe})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, r := range e.rows() {
		if r.state != campaign.Sent {
			t.Errorf("%s: %s (%s), want sent: the outage gave it up", r.phone, r.state, r.errorMsg.String)
		}
	}
}

// TestOutageTimeoutPauses: an API that never answers pauses the campaign
// after OutageTimeout with ErrOutage; nothing is failed.
func TestOutageTimeoutPauses(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e := newOutageEnv(t, start)
	e.addAccount("one", "100000000000001", campaign.TierActive)
	c := e.importN(10)
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 2, MaxAttempts: 2, OutageTimeout: 10 * time.Minute}, Probe: e.probe})
	err := eng.Run(e.ctx)
	if !errors.Is(err, dispatch.ErrOutage) || !errors.Is(err, campaign.ErrPaused) {
		t.Fatalf("run: %v, want ErrOutage and ErrPaused", err)
	}
	if took := e.clock.Now().Sub(start); took < 10*time.Minute || took > 11*time.Minute {
		t.Errorf("paused %v after the start, want at the 10m timeout", took)
	}
	got, err := e.st.Campaign(e.ctx, c.ID)
	if err != nil || got.State != campaign.CampaignPaused || got.PauseReason == "" {
		t.Errorf("campaign %s %q, %v; want paused with the reason", got.State, got.PauseReason, err)
	}
	for _, r := range e.rows() {
		if r.state != campaign.Pending {
			t.Errorf("%s: %s (%s), want pending: nothing fails because the network is down", r.phone, r.state, r.errorMsg.String)
		}
		if r.retries > 1 {
			t.Errorf("%s: %d retries spent", r.phone, r.retries)
		}
	}
}

// TestLoneServerErrorStillFails: one recipient's requests keep getting a
// 5xx while the API answers everyone else. That is no outage: the row
// spends its retry budget and fails — also once it is the last row left,
// when its failures look like an outage until the probe gets an answer.
func TestLoneServerErrorStillFails(t *testing.T) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const bad = "+4915110000003"
	e := newEnv(t, start, sandbox.Faults{FailNumbers: map[string]int{bad: 131000}})
	e.addAccount("one", "100000000000001", campaign.TierActive)
	e.addAccount("two", "100000000000002", campaign.TierActive)
	c := e.importN(10)
	probe := func(ctx context.Context) error {
		_, err := e.client.PhoneNumber(ctx, "100000000000001", "test-token")
		return err
	}
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 1, MaxAttempts: 3}, Probe: probe})
	if err := eng.Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	for phone, r := range e.rows() {
		want := campaign.Sent
		if phone == bad {
			want = campaign.Failed
		}
		if r.state != want {
			t.Errorf("%s: %s (%s), want %s", phone, r.state, r.errorMsg.String, want)
		}
	}
}
