package dispatch

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
)

// markLedger is a Ledger that records the claims Start was asked to mark.
type markLedger struct {
	Ledger  // nil: only Start is called
	started []int64
}

func (l *markLedger) Start(_ context.Context, _ string, cs []campaign.Claim, _ time.Time) ([]int64, error) {
	for _, c := range cs {
		l.started = append(l.started, c.Message.ID)
	}
	return nil, nil
}

// TestStarterPlacedClaims: a claim marked started in its claim's
// transaction, its place in flight taken, goes to a worker without a Start
// and without waiting for room, even while the loop's claims wait for it;
// one that may not go after all (paused, a token missing, a Ctrl-C) is put
// back unsent and gives its place back. The loop's claims are marked by
// Start as before.
func TestStarterPlacedClaims(t *testing.T) {
	for _, tt := range []struct {
		name      string
		paused    bool
		noToken   bool
		cancelled bool
		stale     bool // the marked claim was held up past campaign.Untouched
		wantSent  []int64
		wantClass string
	}{
		// The marked claim first: the loop's waited for the place it held.
		{name: "goes at once", wantSent: []int64{2, 1}},
		{name: "paused meanwhile", paused: true, wantClass: ClassNotSent},
		{name: "token missing", noToken: true, wantClass: "account-fatal"},
		{name: "interrupted", cancelled: true, wantClass: ClassNotSent},
		{name: "held past its lease's sure part", stale: true, wantSent: []int64{1}, wantClass: ClassNotSent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewSim(t0)
			l := &markLedger{}
			e := &Engine{o: Options{Clock: clk, Ledger: l, Token: func(string) (string, error) {
				if tt.noToken {
					return "", errors.New("T is not set")
				}
				return "tok", nil
			}}, breaker: newBreaker()}
			e.paused.Store(tt.paused)
			p := newPacer(clk, 4) // alone: one place in flight
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			claims, placed := make(chan campaign.Claim, 4), make(chan campaign.Claim, 4)
			ready, results := make(chan job, 4), make(chan campaign.Result, 4)
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.newStarter("r", p).run(ctx, t.Context(), claims, placed, ready, results)
			}()
			// The recorder took the one place for its claim along; a claim
			// of the loop's waits for room before it.
			if n, _ := p.startNow(1); n != 1 {
				t.Fatalf("startNow took %d places, want 1", n)
			}
			claims <- campaign.Claim{Message: campaign.Message{ID: 1}}
			if tt.cancelled {
				cancel()
			}
			at := t0
			if tt.stale {
				at = t0.Add(-campaign.Untouched)
			}
			placed <- campaign.Claim{Message: campaign.Message{ID: 2}, Started: true, At: at}
			close(claims)
			close(placed)
			var sent, back []int64
			for j := range ready {
				sent = append(sent, j.c.Message.ID)
				p.endSend(j.start, true, false) // the request was made and answered
			}
			for len(results) > 0 {
				r := <-results
				back = append(back, r.Claim.Message.ID)
				if r.Claim.Message.ID == 2 && r.Outcome.Class != tt.wantClass || r.Outcome.Kind != campaign.OutcomeRetry || !r.Outcome.Refund {
					t.Errorf("claim %d put back as %+v, want a refunded retry (the marked one of class %s)", r.Claim.Message.ID, r.Outcome, tt.wantClass)
				}
			}
			if !slices.Equal(sent, tt.wantSent) || len(back) != 2-len(tt.wantSent) {
				t.Errorf("handed on %v, put back %v; want %v and the rest", sent, back, tt.wantSent)
			}
			<-done
			for _, id := range l.started {
				if id == 2 {
					t.Error("Start was asked to mark the claim already marked")
				}
			}
			if p.sending != 0 {
				t.Errorf("%d places in flight still taken, want none", p.sending)
			}
		})
	}
}
