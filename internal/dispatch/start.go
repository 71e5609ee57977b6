package dispatch

import (
	"context"
	"runtime"
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

// starter is the stage between the claims and the workers. It takes every
// claim waiting, as many as there are places in flight, marks them started
// in one Start (a commit per moment of the pool, not per request) and hands
// each to a worker, which makes its request at once. A claim already
// marked (Claim.Started: the recorder's claims along) is not marked again;
// one whose place was taken with its claim goes at once. A worker is woken once a request, by
// a claim ready to go; claims that may not go are put back here without
// waking one.
type starter struct {
	e      *Engine
	ledger Starter // nil: the ledger marks nothing
	runner string
	slots  *pacer
	// Buffers reused from one batch to the next.
	placed []campaign.Claim // with their places in flight taken
	marks  []campaign.Claim
	jobs   []job
}

// job is a claim whose request may be made: marked started, with its token
// and the place in flight taken for it at start.
type job struct {
	c     campaign.Claim
	token string
	start time.Time
}

func (e *Engine) newStarter(runner string, slots *pacer) *starter {
	l, _ := e.o.Ledger.(Starter)
	return &starter{e: e, ledger: l, runner: runner, slots: slots}
}

// run feeds ready from claims and placed (claims with their places in
// flight taken: they go at once, never behind claims waiting for room)
// until both are closed and drained, then closes ready.
// ctx is the run's (a cancel keeps claims from being sent), sendCtx the
// requests' (it outlives a cancel, for the drain).
func (s *starter) run(ctx, sendCtx context.Context, claims, placed <-chan campaign.Claim, ready chan<- job, results chan<- campaign.Result) {
	defer close(ready)
	var pending []campaign.Claim // waiting for room in flight
	for claims != nil || placed != nil || len(pending) > 0 {
		var wake <-chan struct{}
		var stop <-chan struct{} // a stop or Ctrl-C while waiting for room keeps them from being sent
		if len(pending) > 0 {
			n, w := s.slots.startNow(len(pending))
			if n > 0 {
				s.start(ctx, sendCtx, pending[:n], s.e.o.Clock.Now(), ready, results)
				pending = append(pending[:0], pending[n:]...)
				continue
			}
			wake, stop = w, ctx.Done()
		}
		more := claims
		if len(pending) >= maxBatch {
			more = nil
		}
		select {
		case c, ok := <-placed:
			if !ok {
				placed = nil
				continue
			}
			s.placed = gather(append(s.placed[:0], c), placed, maxBatch)
			s.start(ctx, sendCtx, s.placed, s.e.o.Clock.Now(), ready, results)
		case c, ok := <-more:
			if !ok {
				claims = nil
				continue
			}
			pending = gather(append(pending, c), claims, maxBatch)
		case <-wake:
		case <-stop:
			// Interrupted: only requests already made finish.
			for _, c := range pending {
				results <- s.e.putBack(c, "not sent: interrupted")
			}
			pending = pending[:0]
		}
	}
}

// gather adds the claims waiting in ch to cs, up to max in all.
func gather(cs []campaign.Claim, ch <-chan campaign.Claim, max int) []campaign.Claim {
	for len(cs) < max {
		select {
		case c, ok := <-ch:
			if !ok {
				return cs // the caller sees the close at its next receive
			}
			cs = append(cs, c)
		default:
			return cs
		}
	}
	return cs
}

// start marks the claims that may go started (those not marked yet), each
// in its place in flight taken at start, and hands them to the workers; the
// others are recorded without a request. ctx is the run's (a cancel
// keeps them from being sent), sendCtx the requests'.
func (s *starter) start(ctx, sendCtx context.Context, cs []campaign.Claim, start time.Time, ready chan<- job, results chan<- campaign.Result) {
	s.marks, s.jobs = s.marks[:0], s.jobs[:0]
	for _, c := range cs {
		if ctx.Err() != nil {
			s.slots.endSend(start, false, false)
			results <- s.e.putBack(c, "not sent: interrupted")
			continue
		}
		if c.Started && !start.Before(c.At.Add(campaign.Untouched)) {
			// Marked at its claim and held up since (a stalled process):
			// its lease may have been taken, and no Start checks it now.
			s.slots.endSend(start, false, false)
			results <- s.e.putBack(c, "not sent: held past its lease's sure part")
			continue
		}
		token, res, ok := s.e.admit(c)
		if !ok {
			s.slots.endSend(start, false, false)
			results <- res
			continue
		}
		if !c.Started {
			s.marks = append(s.marks, c)
		}
		s.jobs = append(s.jobs, job{c: c, token: token, start: start})
	}
	if len(s.jobs) == 0 {
		return
	}
	var (
		refused []int64
		err     error
	)
	if s.ledger != nil && len(s.marks) > 0 {
		refused, err = s.ledger.Start(sendCtx, s.runner, s.marks, s.e.o.Clock.Now())
	}
	var lost map[int64]bool
	if len(refused) > 0 {
		lost = make(map[int64]bool, len(refused))
		for _, id := range refused {
			lost[id] = true
		}
	}
	for _, j := range s.jobs {
		if !j.c.Started && (err != nil || lost[j.c.Message.ID]) {
			// The lease is lost, or the start could not be recorded (a
			// mark that failed to commit is no mark): no request. The
			// put-back is refused by the fence if the row is another's now.
			s.slots.endSend(j.start, false, false)
			results <- s.e.putBack(j.c, "not sent: the lease on the row was lost")
			continue
		}
		ready <- j
	}
	// The workers just woken run on this processor first: the next Start
	// would otherwise hold it in SQLite's C code with their requests
	// waiting, until the runtime hands it to another thread.
	runtime.Gosched()
}
