package dispatch

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Starter is a Ledger that marks a claim's request started just before it
// is made (campaign.LeaseExpiry): a row whose lease runs out before the
// mark goes back to pending for anyone to send; one after it becomes
// unknown. Start returns the rows it refused: their lease was lost (the
// runner stalled, another took the row), so their requests are not made.
// Without it, every claimed row counts as started.
type Starter interface {
	Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) (refused []int64, err error)
}

// starter groups the workers' marks: one Start for every mark waiting when
// the last one returned, so a pool of workers costs a commit per moment,
// not one per request.
type starter struct {
	e      *Engine
	ledger Starter
	runner string
	reqs   chan startReq
}

type startReq struct {
	c  campaign.Claim
	ok chan bool
}

// newStarter starts the marks' goroutine until ctx ends; nil when the
// ledger marks nothing.
func (e *Engine) newStarter(ctx context.Context, runner string) *starter {
	l, ok := e.o.Ledger.(Starter)
	if !ok {
		return nil
	}
	s := &starter{e: e, ledger: l, runner: runner, reqs: make(chan startReq)}
	go s.run(ctx)
	return s
}

func (s *starter) run(ctx context.Context) {
	var batch []startReq
	for {
		select {
		case r := <-s.reqs:
			batch = append(batch[:0], r)
		case <-ctx.Done():
			return
		}
	gather:
		for len(batch) < maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		cs := make([]campaign.Claim, len(batch))
		for i, r := range batch {
			cs[i] = r.c
		}
		refused, err := s.ledger.Start(ctx, s.runner, cs, s.e.o.Clock.Now())
		lost := map[int64]bool{}
		for _, id := range refused {
			lost[id] = true
		}
		for _, r := range batch {
			// A mark that failed to commit is no mark: not sent.
			r.ok <- err == nil && !lost[r.c.Message.ID]
		}
	}
}

// mark reports whether c's request may be made: its start is recorded
// under its lease. A nil starter lets every request go.
func (s *starter) mark(ctx context.Context, c campaign.Claim) bool {
	if s == nil {
		return true
	}
	ok := make(chan bool, 1)
	select {
	case s.reqs <- startReq{c: c, ok: ok}:
	case <-ctx.Done():
		return false
	}
	return <-ok
}
