package dispatch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/claim"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/whatsapp"
)

// stopWithin cancels the run once the simulated clock has gone past limit:
// an engine still waiting then has not stopped by itself.
func stopWithin(e *env, limit time.Duration) context.Context {
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	end := e.clock.Now().Add(limit)
	e.clock.OnAdvance = func(_, to time.Time) {
		if to.After(end) {
			cancel()
		}
	}
	return ctx
}

// TestStopWhenCappedStickyRows: the rows left can only go through their
// sticky number, which is at its daily cap, while another number has room:
// --stop-when-capped stops (ErrCapped) once the others are sent, instead of
// waiting "to retry" their number a minute at a time for ever.
func TestStopWhenCappedStickyRows(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	if err := e.st.SetTier(e.ctx, campaign.TierNew, campaign.Limits{Rate: 100, Burst: 100, DailyCap: 10}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierNew)
	seed := e.importN(10) // a messages these ten: they stick to a, which is at its cap
	if err := e.engine(seed, dispatch.Options{}).Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	if used := e.usedToday("a"); used != 10 {
		t.Fatalf("a used %d, want its cap of 10", used)
	}
	e.addAccount("b", "1002", campaign.TierActive)
	// The ten again (another template: not a repeat), and ten new ones.
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range 20 {
		fmt.Fprintf(&b, "+49151%08d,Person %d\n", 10000000+i, i)
	}
	c, skipped, err := runner.Import(e.ctx, e.st, strings.NewReader(b.String()), "next.csv", campaign.Campaign{
		Name: "next", Fingerprint: "next", Source: "next.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "wasend_next", Lang: "en_US", Params: []string{"name"}},
	}, "")
	if err != nil || len(skipped) != 0 {
		t.Fatalf("Import: %v, skipped %v", err, skipped)
	}
	ctx := stopWithin(e, 6*time.Hour)
	err = e.engine(c, dispatch.Options{Policy: dispatch.Policy{StopWhenCapped: true}}).Run(ctx)
	if !errors.Is(err, dispatch.ErrCapped) {
		t.Fatalf("Run = %v, want ErrCapped: the rows left can only go through a capped number", err)
	}
	n, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n[campaign.Sent] != 10 || n[campaign.Pending] != 10 {
		t.Errorf("counts %v, want the 10 new ones sent (through b) and the 10 of a pending", n)
	}
}

// TestStopWhenCappedWaitsForAnswers: the claim that finds every account at
// its cap comes while a request is in flight; that request fails, which
// gives its quota back. The engine waits for its answer before it stops,
// and sends one more row with the quota given back.
func TestStopWhenCappedWaitsForAnswers(t *testing.T) {
	const slow = "+4915110000003" // answered 131026 (permanent: its quota back), once released
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{FailNumbers: map[string]int{slow: 131026}})
	if err := e.st.SetTier(e.ctx, campaign.TierNew, campaign.Limits{Rate: 100, Burst: 100, DailyCap: 10}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierNew)
	release := make(chan struct{})
	var released atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), slow) {
			<-release
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		e.box.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	})
	e.client = whatsapp.New(whatsapp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})
	c := e.importN(12)
	var sent atomic.Int32
	eng := e.engine(c, dispatch.Options{Policy: dispatch.Policy{StopWhenCapped: true},
		Observe: func(ev dispatch.Event) {
			// Every other request of the cap answered: now the slow one.
			if ev.Kind == dispatch.EventSent && sent.Add(1) == 9 && released.CompareAndSwap(false, true) {
				close(release)
			}
		}})
	if err := eng.Run(stopWithin(e, 6*time.Hour)); !errors.Is(err, dispatch.ErrCapped) {
		t.Fatalf("Run = %v, want ErrCapped", err)
	}
	n, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n[campaign.Sent] != 10 || n[campaign.Failed] != 1 || n[campaign.Pending] != 1 {
		t.Errorf("counts %v, want 10 sent (the failed one's quota used again), 1 failed, 1 pending", n)
	}
}

// TestDoneForNowRescuesStoppedRunnersRows: a run that ends "done for now"
// (what is left waits for a retry a day away) while another runner, which
// stopped beating, holds rows in flight waits until that runner counts as
// dead and turns its rows unknown, rather than leave them in flight.
func TestDoneForNowRescuesStoppedRunnersRows(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	e.addAccount("a", "1001", campaign.TierActive)
	c := e.importN(4)
	start := e.clock.Now()
	if err := e.st.RegisterRunner(e.ctx, campaign.Runner{ID: "ghost", CampaignID: c.ID, Host: "elsewhere", PID: 7, StartedAt: start, HeartbeatAt: start}); err != nil {
		t.Fatal(err)
	}
	cs, err := claim.New(e.st).ClaimN(e.ctx, c.ID, "ghost", start, 4)
	if err != nil || len(cs) != 4 {
		t.Fatalf("ghost's claim: %d, %v", len(cs), err)
	}
	// Their requests start. Two are answered: a retry a day away (a
	// rescheduled 131049, say). The other two stay in flight in the
	// ghost, which beats no more.
	if refused, err := e.st.Start(e.ctx, "ghost", cs, start); err != nil || len(refused) > 0 {
		t.Fatalf("ghost's start: %v refused, %v", refused, err)
	}
	for _, cl := range cs[:2] {
		if err := e.st.RecordAll(e.ctx, "ghost", []campaign.Result{{Claim: cl, Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: start.Add(24 * time.Hour), Refund: true}, At: start}}); err != nil {
			t.Fatal(err)
		}
	}
	err = e.engine(c, dispatch.Options{Policy: dispatch.Policy{LongWait: time.Hour}}).Run(stopWithin(e, 6*time.Hour))
	if !errors.Is(err, dispatch.ErrRescheduled) {
		t.Fatalf("Run = %v, want ErrRescheduled", err)
	}
	n, err := e.st.Counts(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n[campaign.Sending] != 0 || n[campaign.Unknown] != 2 || n[campaign.Pending] != 2 {
		t.Errorf("counts %v, want the ghost's 2 in flight unknown, 2 pending and none left sending", n)
	}
}
