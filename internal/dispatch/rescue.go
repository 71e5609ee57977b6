package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// rescuer turns the rows of dead runners into unknown ones while the engine
// runs, as River's job rescuer does for stuck jobs: a process killed
// mid-campaign must not leave the others waiting for its requests in flight
// until someone starts a new run.
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
