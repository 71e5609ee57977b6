package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// rescuer ends the leases of rows whose runner stopped beating (or is
// known dead) while the engine runs, as River's job rescuer does for stuck
// jobs: a process killed mid-campaign must not leave the others waiting
// for its rows until someone starts a new run. Rows never sent go back to
// pending, rows whose request may have started become unknown
// (campaign.LeaseExpiry).
type rescuer struct {
	e    *Engine
	self string
	next time.Time // when to look next
}

func (e *Engine) newRescuer(self string, start time.Time) *rescuer {
	return &rescuer{e: e, self: self, next: start}
}

// due looks for rows of dead runners when the interval has passed, and
// reports how many it moved as an EventRecovered.
func (r *rescuer) due(ctx context.Context, now time.Time) error {
	if now.Before(r.next) {
		return nil
	}
	o := r.e.o
	r.next = now.Add(o.Rescue)
	// Its own leases first, at the clock the rescue reads: a rescuer never
	// takes back the rows of the runner that runs it.
	_ = o.Ledger.Heartbeat(ctx, r.self, now)
	moved, err := o.Ledger.Rescue(ctx, o.Campaign.ID, now, func(run campaign.Runner) bool {
		return run.ID != r.self && o.Dead(run, now)
	})
	if err != nil {
		return fmt.Errorf("rescue rows of dead runners: %w", err)
	}
	if moved > 0 {
		o.Observe(Event{Kind: EventRecovered, At: now, Count: moved})
	}
	return nil
}

// HolderLister is a Ledger that can list the other runners holding a
// campaign's rows in flight. With it, a run that ends while rows are left
// (done for now, stopped at the caps) first settles the rows of runners
// that stopped: see settleOthers.
type HolderLister interface {
	// Holders returns the runners other than self whose rows of the
	// campaign are in flight; an unregistered one has a zero heartbeat.
	Holders(ctx context.Context, campaignID int64, self string) ([]campaign.Runner, error)
}

// settleOthers waits, for a run about to end with rows left, until every
// other runner holding the campaign's rows in flight has either beaten
// since it was first seen (alive: it records its rows itself) or counts as
// dead, and rescues the dead ones' rows — unknown, for the waiting statuses
// to settle. Without it, a run started just after a kill -9 would end at
// once and leave that process's rows in flight until the next run.
func (e *Engine) settleOthers(ctx, bg context.Context, self string) error {
	hl, ok := e.o.Ledger.(HolderLister)
	if !ok {
		return nil
	}
	seen := map[string]time.Time{} // runner → its heartbeat when first seen
	for {
		now := e.o.Clock.Now()
		holders, err := hl.Holders(bg, e.o.Campaign.ID, self)
		if err != nil {
			return err
		}
		waiting, dead := false, false
		for _, r := range holders {
			first, ok := seen[r.ID]
			if !ok {
				seen[r.ID], first = r.HeartbeatAt, r.HeartbeatAt
			}
			switch {
			case e.o.Dead(r, now):
				dead = true
			case !r.HeartbeatAt.After(first):
				waiting = true // no beat since: stopped, or about to beat
			}
		}
		if dead {
			_ = e.o.Ledger.Heartbeat(bg, self, now) // its own leases first, as the rescuer does
			moved, err := e.o.Ledger.Rescue(bg, e.o.Campaign.ID, now, func(run campaign.Runner) bool {
				return run.ID != self && e.o.Dead(run, now)
			})
			if err != nil {
				return fmt.Errorf("rescue rows of dead runners: %w", err)
			}
			if moved > 0 {
				e.o.Observe(Event{Kind: EventRecovered, At: now, Count: moved})
			}
		}
		if !waiting {
			return nil
		}
		select {
		case <-e.o.Clock.After(min(e.o.Poll, e.o.Heartbeat)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
