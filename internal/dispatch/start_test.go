package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
)

// stallingLedger is the real ledger whose first Start comes too late: every
// lease taken so far ran out before the marks (the runner stalled), so the
// rows went back to pending (campaign.LeaseExpiry) and Start refuses them.
type stallingLedger struct {
	*claim.Ledger
	st      *store.Store
	stalled bool
	refused int
}

func (l *stallingLedger) Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) ([]int64, error) {
	if !l.stalled {
		l.stalled = true
		if _, err := l.st.RecoverOrphans(ctx, now.Add(campaign.LeaseTerm+time.Minute), func(campaign.Runner) bool { return false }); err != nil {
			return nil, err
		}
	}
	refused, err := l.Ledger.Start(ctx, runner, cs, now)
	l.refused += len(refused)
	return refused, err
}

// TestLostLeaseStartsNoRequest: claims whose lease was lost before the
// starter marked them are not sent by this runner: their put-back is
// refused by the fence and said lost; the rows, pending again, are claimed
// anew and every recipient gets exactly one request.
func TestLostLeaseStartsNoRequest(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: 100000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("main", "100000000000001", campaign.TierActive)
	const n = 20
	c := e.importN(n)
	ledger := &stallingLedger{Ledger: claim.New(e.st), st: e.st}
	lost := 0
	o := dispatch.Options{Campaign: c, Ledger: ledger, Sender: e.client, Clock: e.clock, Policy: dispatch.Policy{Workers: 4},
		Token:  func(string) (string, error) { return "test-token", nil },
		Runner: campaign.Runner{ID: "sim", Host: "test", PID: 1},
		Observe: func(ev dispatch.Event) {
			if ev.Kind == dispatch.EventLost {
				lost += ev.Count
			}
		}}
	eng, err := dispatch.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if ledger.refused == 0 {
		t.Fatal("no mark was refused: the test did not lose a lease")
	}
	if lost != ledger.refused {
		t.Errorf("EventLost counted %d rows, want the %d Start refused", lost, ledger.refused)
	}
	oneRequestEach(t, e, n)
	counts, err := e.st.Counts(e.ctx, c.ID)
	if err != nil || counts[campaign.Sent] != n {
		t.Errorf("counts %v, %v; want %d sent", counts, err, n)
	}
}

// countingLedger is the real ledger counting the marks: those Start made
// and those the recorder's claims along came with.
type countingLedger struct {
	*claim.Ledger
	mu                                   sync.Mutex
	startRows, startedTwice, markedAlong int
}

func (l *countingLedger) Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) ([]int64, error) {
	l.mu.Lock()
	for _, c := range cs {
		l.startRows++
		if c.Started {
			l.startedTwice++
		}
	}
	l.mu.Unlock()
	return l.Ledger.Start(ctx, runner, cs, now)
}

func (l *countingLedger) RecordAndClaimN(ctx context.Context, runner string, rs []campaign.Result, campaignID int64, now time.Time, max, start int) ([]campaign.Claim, error, error) {
	cs, claimErr, err := l.Ledger.RecordAndClaimN(ctx, runner, rs, campaignID, now, max, start)
	l.mu.Lock()
	for _, c := range cs {
		if c.Started {
			l.markedAlong++
		}
	}
	l.mu.Unlock()
	return cs, claimErr, err
}

// TestClaimsAlongNeedNoStart: the rows the recorder claims along come
// marked started from their claim's transaction and get no Start; every
// other claim is marked by Start. Each row's request is marked once and
// made once.
func TestClaimsAlongNeedNoStart(t *testing.T) {
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sandbox.Faults{})
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e6}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("main", "100000000000001", campaign.TierActive)
	const n = 1500
	c := e.importN(n)
	ledger := &countingLedger{Ledger: claim.New(e.st)}
	if err := e.engine(c, dispatch.Options{Ledger: ledger, Policy: dispatch.Policy{Workers: 16}}).Run(e.ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if ledger.markedAlong == 0 {
		t.Fatal("no claim along came marked: the test did not reach the recorder's claims")
	}
	if ledger.startedTwice > 0 {
		t.Errorf("Start was given %d claims already marked", ledger.startedTwice)
	}
	if got := ledger.startRows + ledger.markedAlong; got != n {
		t.Errorf("%d marks by Start + %d at the claim = %d, want one a row (%d)", ledger.startRows, ledger.markedAlong, got, n)
	}
	oneRequestEach(t, e, n)
}

// oneRequestEach fails t unless each of the n recipients got exactly one
// request.
func oneRequestEach(t *testing.T, e *env, n int) {
	t.Helper()
	perPhone := map[string]int{}
	for _, s := range e.sendsByRecipient() {
		perPhone[s.phone]++
	}
	for phone, k := range perPhone {
		if k != 1 {
			t.Errorf("%s got %d requests, want 1", phone, k)
		}
	}
	if len(perPhone) != n {
		t.Errorf("%d recipients got a request, want %d", len(perPhone), n)
	}
}
