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
// each to a worker, which makes its request at once. A worker is woken once
// a request, by a claim ready to go; claims that may not go are put back
// here without waking one.
type starter struct {
	e      *Engine
	ledger Starter // nil: the ledger marks nothing
	runner string
	slots  *pacer
	// Buffers reused from one batch to the next.
	marks []campaign.Claim
	jobs  []job
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

// run feeds ready from claims until claims is closed and drained, then
// closes ready. ctx is the run's (a cancel keeps claims from being sent),
// sendCtx the requests' (it outlives a cancel, for the drain).
func (s *starter) run(ctx, sendCtx context.Context, claims <-chan campaign.Claim, ready chan<- job, results chan<- campaign.Result) {
	defer close(ready)
	var pending []campaign.Claim
	open := true
	for {
		if len(pending) == 0 {
			c, ok := <-claims
			if !ok {
				return
			}
			pending = append(pending, c)
		}
	gather:
		for open && len(pending) < maxBatch {
			select {
			case c, ok := <-claims:
				if !ok {
					open = false
					break gather
				}
				pending = append(pending, c)
			default:
				break gather
			}
		}
		// Room in flight first: a stop or Ctrl-C while waiting for it
		// still keeps these claims from being sent.
		n, start, err := s.slots.startSends(ctx, len(pending))
		if err != nil {
			// Interrupted: only requests already made finish.
			for _, c := range pending {
				results <- s.e.putBack(c, "not sent: interrupted")
			}
			pending = pending[:0]
			continue
		}
		s.start(sendCtx, pending[:n], start, ready, results)
		pending = append(pending[:0], pending[n:]...)
	}
}

// start marks the claims that may go started, each in its place in flight
// taken at start, and hands them to the workers; the others are recorded
// without a request.
func (s *starter) start(ctx context.Context, cs []campaign.Claim, start time.Time, ready chan<- job, results chan<- campaign.Result) {
	s.marks, s.jobs = s.marks[:0], s.jobs[:0]
	for _, c := range cs {
		token, res, ok := s.e.admit(c)
		if !ok {
			s.slots.endSend(start, false, false)
			results <- res
			continue
		}
		s.marks = append(s.marks, c)
		s.jobs = append(s.jobs, job{c: c, token: token, start: start})
	}
	if len(s.jobs) == 0 {
		return
	}
	var (
		refused []int64
		err     error
	)
	if s.ledger != nil {
		refused, err = s.ledger.Start(ctx, s.runner, s.marks, s.e.o.Clock.Now())
	}
	var lost map[int64]bool
	if len(refused) > 0 {
		lost = make(map[int64]bool, len(refused))
		for _, id := range refused {
			lost[id] = true
		}
	}
	for _, j := range s.jobs {
		if err != nil || lost[j.c.Message.ID] {
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
