// Package dispatch is the send engine: it claims due messages together with
// the tokens and quota they spend, sends them through a bounded pool of
// workers, and records every outcome. Scheduling state lives behind Ledger,
// so several engines — in one process, several processes, or later several
// hosts — share the same limits.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/whatsapp"
)

// Ledger holds the state that senders must share: token buckets, daily caps
// and the claims on messages. The SQLite store implements it; a Redis one
// can, for senders on several hosts.
type Ledger interface {
	// ClaimN atomically takes up to max of the campaign's due messages, each
	// with one token and one unit of daily quota of the account chosen for
	// it. It returns at least one claim, or a *campaign.WaitError when
	// nothing can go now, campaign.ErrDone when no row is open,
	// campaign.ErrPaused when the campaign is paused.
	ClaimN(ctx context.Context, campaignID int64, runner string, now time.Time, max int) ([]campaign.Claim, error)
	// RecordAll stores outcomes of claims, all or none.
	RecordAll(ctx context.Context, runner string, results []campaign.Result) error
	RegisterRunner(ctx context.Context, r campaign.Runner) error
	Heartbeat(ctx context.Context, runner string, now time.Time) error
	UnregisterRunner(ctx context.Context, runner string) error
	// Rescue turns the campaign's rows held by dead runners into unknown
	// ones, while it runs.
	Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error)
	// SetOutage records the outage the campaign waits out (a zero Since
	// clears it) and, with a pause reason, pauses the campaign.
	SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error
	// CampaignStopped returns campaign.ErrPaused or campaign.ErrCancelled
	// once the campaign was paused or cancelled from elsewhere, nil while it
	// may be sent. The engine asks with every heartbeat.
	CampaignStopped(ctx context.Context, campaignID int64) error
}

// RateReporter is a Ledger that can say how many messages per second it
// may hand out for a campaign now: the usable accounts' effective rates,
// within the global limit (math.Inf(1) when nothing bounds it). The engine
// sizes the requests in flight by it; without it, Workers is the size.
type RateReporter interface {
	AllowedRate(ctx context.Context, campaignID int64, now time.Time) (float64, error)
}

// RecordClaimer is a Ledger that can record outcomes and claim the next
// rows in one transaction, halving the commits while the database, not
// the limits, holds sending back. err means nothing was recorded; claimErr
// is what ClaimN would have returned instead of claims. The first start
// claims are marked started in that transaction (Claim.Started), as a
// Starter's Start would mark them: their requests are made as soon as
// they have room in flight, without a Start.
type RecordClaimer interface {
	RecordAndClaimN(ctx context.Context, runner string, results []campaign.Result, campaignID int64, now time.Time, max, start int) (claims []campaign.Claim, claimErr error, err error)
}

// Sender delivers one request to the Cloud API. *whatsapp.Client is one.
type Sender interface {
	Send(ctx context.Context, req whatsapp.Request) (whatsapp.Response, error)
}

// Options configure an Engine. Zero values get the defaults in brackets.
type Options struct {
	Campaign campaign.Campaign
	// Endpoint chooses each send's endpoint: /messages, or the Marketing
	// Messages API's (zero: /messages for every send).
	Endpoint Endpoint
	Ledger   Ledger
	Sender   Sender
	Clock    clock.Clock // [clock.Real]
	// Token returns the access token held in the named environment variable.
	Token func(env string) (string, error)
	// Runner identifies this engine in the ledger.
	Runner campaign.Runner
	// Poll bounds any wait, so changes made from another shell (limits,
	// quota resets, disabled accounts) are seen within it. [2s]
	Poll time.Duration
	// Heartbeat is how often the runner proves it is alive. [2s]
	Heartbeat time.Duration
	// Dead says whether another runner is gone, so the rows it holds turn
	// unknown while this engine works. [its heartbeat is older than Stale]
	Dead func(r campaign.Runner, now time.Time) bool
	// Stale is how long a runner may miss heartbeats before the default
	// Dead counts it as gone. [30s]
	Stale time.Duration
	// Rescue is how often the engine looks for rows of dead runners. [3s]
	Rescue time.Duration
	// Probe asks the Cloud API whether it answers, to confirm an outage
	// (connection errors and 5xx from every account) and to end it; a Graph
	// error below 500 counts as an answer. Nil: no outage handling, every
	// failure is the row's.
	Probe func(ctx context.Context) error
	// Drain bounds the wait for in-flight requests after ctx is cancelled;
	// past it they are aborted and their rows recorded unknown. [15s]
	Drain time.Duration
	// Policy is how the campaign is sent: workers, retries, rests, pauses.
	// Zero fields get DefaultPolicy's values.
	Policy
	// Observe receives every event, from several goroutines at once; it
	// must be safe for concurrent use and not block for long.
	Observe func(Event)
	// Rand returns a float in [0,1) for jitter. [math/rand/v2]
	Rand func() float64
	// Reactions, when set, is where the accounts' throttle reactions are
	// shared with the other hosts sending from their numbers (--limits);
	// nil: each account's reaction is this engine's.
	Reactions SharedReactions
}

// ErrCapped is returned by Run with StopWhenCapped when every account
// reached its daily cap.
var ErrCapped = errors.New("every account reached its daily cap")

// ReachError is returned by Run with StopWhenCapped when the portfolios of
// the usable accounts have used up their messaging limit. It is ErrCapped
// too: the same exit, for a limit of Meta's.
type ReachError struct {
	Until time.Time // when the oldest recipient leaves the 24 h window
}

func (e *ReachError) Error() string {
	return fmt.Sprintf("the messaging limit of every usable account's portfolio is used up (distinct recipients in 24 h); room again at %s",
		e.Until.Format(time.RFC3339))
}

func (e *ReachError) Is(target error) bool { return target == ErrCapped }

// ErrRescheduled is returned by Run with LongWait when what is left waits
// for a retry further away than LongWait; the error names the time.
var ErrRescheduled = errors.New("the rows left are rescheduled")

// EventKind names what happened.
type EventKind int

const (
	EventSent EventKind = iota + 1
	EventRetry
	EventFailed
	EventUnknown
	EventWait    // nothing can be sent now; Wait says why
	EventResumed // sending again after a wait
	// EventRecovered: rows held by a dead runner became unknown; Count
	// says how many.
	EventRecovered
	// EventAccount: an account was throttled, restricted or dropped from
	// the campaign; Outcome says how.
	EventAccount
	// EventPaused: the campaign paused itself; Outcome.Pause says why.
	EventPaused
	// EventOutage: no account gets an answer from the Cloud API; claiming
	// stops until a probe gets one. Outage says since when and the next
	// probe. EventResumed ends it.
	EventOutage
	// EventLost: rows whose lease this runner lost (it stalled past its
	// lease and a rescuer took them back, or another runner claims them
	// now): their writes were refused by their fence and they are dropped,
	// never sent again by this runner. Count says how many.
	EventLost
)

// Event is one thing the engine did, for progress output and logs.
type Event struct {
	Kind    EventKind
	At      time.Time
	Claim   campaign.Claim
	Outcome campaign.Outcome
	Wait    *campaign.WaitError
	Count   int              // EventRecovered: rows turned unknown; EventLost: rows dropped
	Outage  *campaign.Outage // EventOutage
}

// Engine sends one campaign.
type Engine struct {
	o Options
	// What this engine learnt before the ledger did: claims made in the
	// moment between such an answer and its commit are put back unsent.
	dropped sync.Map // account ID → struct{}: account-fatal answer seen
	paused  atomic.Bool
	// stop is the ledger's campaign.ErrPaused or ErrCancelled, seen by a
	// heartbeat: Run ends with it at its next turn.
	stop      atomic.Pointer[error]
	resting   sync.Map // account ID (0: every account) → time.Time: throttled until
	reactions reactions
	breaker   *breaker
}

// New returns an engine with defaults filled in.
func New(o Options) (*Engine, error) {
	if o.Ledger == nil || o.Sender == nil {
		return nil, errors.New("dispatch: Ledger and Sender are required")
	}
	if o.Runner.ID == "" {
		return nil, errors.New("dispatch: Runner.ID is required")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Token == nil {
		o.Token = func(string) (string, error) { return "", nil }
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = campaign.HeartbeatEvery
	}
	if o.Stale <= 0 {
		o.Stale = 30 * time.Second
	}
	if o.Dead == nil {
		stale := o.Stale
		o.Dead = func(r campaign.Runner, now time.Time) bool { return now.Sub(r.HeartbeatAt) > stale }
	}
	if o.Rescue <= 0 {
		o.Rescue = 3 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 15 * time.Second
	}
	if err := o.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	o.Policy = o.Policy.WithDefaults()
	if o.Observe == nil {
		o.Observe = func(Event) {}
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return &Engine{o: o, breaker: newBreaker()}, nil
}

// ClassNotSent marks an attempt put back without a request: its token
// was spent, but nothing reached the API.
const ClassNotSent = "not-sent"

// ClassOutage marks a transient failure the outage breaker took as the
// API's, not the row's: it spent no retry and gave its quota back, and the
// attempt says so, so its row's retries add up from its attempts.
const ClassOutage = "outage"

// recordMin and recordLinger: the recorder waits up to recordLinger for
// recordMin outcomes (or one per place in flight, if fewer) before it
// commits fewer. A transaction costs about a millisecond besides its rows
// (~40 µs each: BenchmarkClaimRecordBatch), so a larger one pays: waiting
// for every place in flight rather than 128 grew the transactions on
// loopback from 105–112 rows to 137–151. The wait only ever delays the
// bookkeeping of requests already answered, and the linger bounds how long
// (a crash leaves those rows unknown, never sent twice).
const (
	recordMin    = maxBatch
	recordLinger = 4 * time.Millisecond
)

// maxBatch bounds the claims taken, and the outcomes recorded, in one
// transaction.
const maxBatch = 256

// Run sends the campaign until no row is open, the campaign is paused, the
// caps stop it (StopWhenCapped), or ctx is cancelled. On cancel it stops
// claiming and starts no request: claims not yet sent go back to pending
// unsent; it waits up to Drain for the requests in flight, records their
// outcomes and returns ctx's error. A pause stops it the same way.
//
// Four stages: this loop claims due messages (in batches, when tokens
// allow), a starter marks those with a place in flight started (in
// batches too; the recorder's claims along come marked), workers send
// them, and one recorder commits outcomes in groups.
// A pacer sizes the requests in flight (at most Workers) by the accounts'
// rate and the measured latency, from one until a message is accepted; a row is held from claim to commit, so at
// most twice that limit are ever between 'sending' and their recorded
// outcome.
func (e *Engine) Run(ctx context.Context) error {
	o := e.o
	// Records and the runner's bookkeeping outlive a cancel: an outcome
	// that came back must reach the database.
	bg := context.WithoutCancel(ctx)
	r := o.Runner
	r.CampaignID = o.Campaign.ID
	r.StartedAt, r.HeartbeatAt = o.Clock.Now(), o.Clock.Now()
	if err := o.Ledger.RegisterRunner(bg, r); err != nil {
		return err
	}
	defer o.Ledger.UnregisterRunner(bg, r.ID)

	stopBeat := e.heartbeat(bg)
	defer stopBeat()
	rescuer := e.newRescuer(r.ID, r.StartedAt)
	// An outage noted by an earlier run is history; this run notes its own.
	_ = o.Ledger.SetOutage(bg, o.Campaign.ID, campaign.Outage{}, "")

	// sendCtx survives a cancel of ctx so in-flight requests can finish;
	// abort ends them when the drain time is up.
	sendCtx, abort := context.WithCancel(bg)
	defer abort()

	var (
		// Claims may run one pool ahead of the senders, so a worker never
		// idles while the next batch is claimed; at most twice the limit
		// of requests in flight are ever claimed and not yet recorded.
		slots = newPacer(o.Clock, o.Workers)
		jobs  = make(chan campaign.Claim, 2*o.Workers)
		// placed holds the recorder's claims along with their places in
		// flight taken (at most the limit), marked started.
		placed = make(chan campaign.Claim, o.Workers)
		// ready holds claims marked started, each with its place in
		// flight, for the workers.
		ready = make(chan job, o.Workers)
		// results has room for every row claimed: the starter may put
		// back a window of claims while the workers' outcomes wait.
		results = make(chan campaign.Result, 2*o.Workers)
		// done wakes the loop when outcomes were recorded: a retry may
		// now be due, or the last in-flight row finished.
		done = make(chan struct{}, 1)
		// recordedGen counts commits of outcomes, so the loop can tell
		// that a row it saw in flight was recorded since it looked.
		recordedGen atomic.Uint64
		stages      sync.WaitGroup
		recorded    = make(chan struct{})
		errMu       sync.Mutex
		workErr     error
		waiting     *campaign.WaitError
		// saturated: the last claim was not cut short by tokens or caps.
		saturated bool
	)
	fail := func(err error) {
		errMu.Lock()
		if workErr == nil {
			workErr = err
		}
		errMu.Unlock()
	}
	firstErr := func() error {
		errMu.Lock()
		defer errMu.Unlock()
		return workErr
	}

	// The starter takes the claims that have a place in flight and marks
	// them started; workers make the requests. They start as claims need them, up to the
	// limit, and stay (at most Workers); the pacer lets no more than the
	// limit send at once.
	stages.Add(1)
	go func() {
		defer stages.Done()
		e.newStarter(r.ID, slots).run(ctx, sendCtx, jobs, placed, ready, results)
	}()
	var workersMu sync.Mutex
	workers := 0
	spawn := func() {
		workersMu.Lock()
		defer workersMu.Unlock()
		for need := min(slots.held(), slots.Limit()); workers < need; workers++ {
			stages.Add(1)
			go func() {
				defer stages.Done()
				for j := range ready {
					results <- e.attempt(sendCtx, j, slots)
				}
			}()
		}
	}
	rateAt := time.Time{}
	rates, _ := o.Ledger.(RateReporter)
	// claimAlong: the last claim got all it asked for, so the database and
	// not the limits holds sending back; then the recorder claims as many
	// rows as it records, in the same transaction, each new row taking a
	// recorded one's place in the window. Anything short of that hands
	// claiming back to this loop, which knows how to wait.
	var (
		claimAlong atomic.Bool
		// nextRescue: when the loop must look for dead runners' rows;
		// from then on claiming is the loop's again.
		nextRescue       atomic.Int64
		recordClaimer, _ = o.Ledger.(RecordClaimer)
		// jobsMu orders the recorder's claims along before finish closes
		// jobs: rows claimed after the close would stay sending with no
		// worker to send them (and a send on the closed channel panics).
		jobsMu     sync.Mutex
		jobsClosed bool
	)
	commit := func(batch []campaign.Result) (kept int, err error) {
		jobsMu.Lock()
		defer jobsMu.Unlock()
		now := o.Clock.Now()
		if open, _ := e.breaker.state(); jobsClosed || recordClaimer == nil || !claimAlong.Load() || ctx.Err() != nil ||
			e.paused.Load() || e.stop.Load() != nil || open || firstErr() != nil || now.UnixNano() >= nextRescue.Load() {
			claimAlong.Store(false)
			return 0, o.Ledger.RecordAll(bg, r.ID, batch)
		}
		want := slots.handOn(len(batch))
		if want == 0 {
			return 0, o.Ledger.RecordAll(bg, r.ID, batch)
		}
		// Claims along are marked started in their claim's transaction,
		// not by a Start of their own (a commit each): their requests are
		// made as soon as they have room in flight. Those that have it now
		// take it here and go at once; the others wait for it behind the
		// claims queued before them (docs/architecture.md, "The Ledger").
		room, _ := slots.startNow(want)
		cs, claimErr, err := recordClaimer.RecordAndClaimN(bg, r.ID, batch, o.Campaign.ID, now, want, want)
		atOnce := min(room, len(cs))
		for range room - atOnce { // places taken for claims the transaction did not make
			slots.endSend(time.Time{}, false, false)
		}
		var fenced *campaign.FenceError
		if err != nil && !errors.As(err, &fenced) {
			return 0, err
		}
		if claimErr != nil || len(cs) < want {
			claimAlong.Store(false)
		}
		if errors.Is(claimErr, campaign.ErrPaused) || errors.Is(claimErr, campaign.ErrCancelled) {
			// Said once: the claim that paused the campaign (no usable
			// account left) knows why; the next one would only see it
			// paused. Claims still queued go back unsent.
			e.paused.Store(true)
			fail(claimErr)
		}
		for i, c := range cs {
			if i < atOnce {
				placed <- c
			} else {
				jobs <- c
			}
		}
		spawn()
		return len(cs), err // nil, or the rows a fence refused
	}
	go func() {
		defer close(recorded)
		e.record(results, slots.Limit, commit, func(n int) {
			recordedGen.Add(1) // before release: see the WaitInFlight case
			slots.release(n)
			select {
			case done <- struct{}{}:
			default:
			}
		}, fail)
	}()

	finish := func(result error) error {
		jobsMu.Lock()
		jobsClosed = true
		close(jobs)
		close(placed)
		jobsMu.Unlock()
		go func() { stages.Wait(); close(results) }()
		if ctx.Err() != nil {
			select {
			case <-recorded:
			case <-time.After(o.Drain):
				abort()
				// Aborted requests record quickly; don't hang on a stuck disk.
				select {
				case <-recorded:
				case <-time.After(5 * time.Second):
				}
			}
		} else {
			<-recorded
		}
		if err := firstErr(); err != nil {
			return err
		}
		return result
	}

	// ownAnswers waits while a request of this run is still in flight and
	// reports whether the loop should claim again: after an answer, or when
	// one was recorded since the claim at gen (the count is bumped before
	// its place is released), rather than wait a poll for it.
	ownAnswers := func(gen uint64) (again bool, err error) {
		if slots.held() > 0 {
			select {
			case <-done:
				return true, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		return recordedGen.Load() != gen, nil
	}

	for {
		if err := firstErr(); err != nil {
			return finish(nil)
		}
		if stop := e.stop.Load(); stop != nil {
			return finish(*stop)
		}
		if open, _ := e.breaker.state(); open {
			if err := e.waitOutage(ctx, bg); err != nil {
				switch {
				case ctx.Err() != nil:
					return finish(ctx.Err())
				case errors.Is(err, campaign.ErrPaused), errors.Is(err, campaign.ErrCancelled):
					// The outage timed out, or an operator stopped the campaign.
					return finish(err)
				}
				fail(err)
				return finish(nil)
			}
			continue
		}
		if now := o.Clock.Now(); rates != nil && (rateAt.IsZero() || now.Sub(rateAt) >= rateEvery) {
			// Read once in a while: it only sizes the pool, and the
			// claims themselves never exceed the limits.
			if rate, err := rates.AllowedRate(bg, o.Campaign.ID, now); err == nil {
				slots.setRate(rate)
			}
			rateAt = now
		}
		n, err := slots.reserve(ctx, maxBatch)
		if err != nil {
			return finish(ctx.Err())
		}
		if saturated && n < slots.Limit() {
			// The last claim got all it asked for: the limits are not
			// what holds sending back, the database is. Let a few more
			// requests finish so this claim's transaction serves many.
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
			}
			n += slots.grab(maxBatch - n)
		}
		if ctx.Err() != nil {
			slots.release(n)
			return finish(ctx.Err())
		}
		now := o.Clock.Now()
		if err := rescuer.due(bg, now); err != nil {
			slots.release(n)
			fail(err)
			return finish(nil)
		}
		nextRescue.Store(rescuer.next.UnixNano())
		gen := recordedGen.Load()
		cs, err := o.Ledger.ClaimN(bg, o.Campaign.ID, r.ID, now, n)
		slots.release(n - len(cs))
		saturated = err == nil && len(cs) == n
		claimAlong.Store(saturated)
		if err == nil {
			if waiting != nil {
				waiting = nil
				o.Observe(Event{Kind: EventResumed, At: now})
			}
			for _, c := range cs {
				jobs <- c
			}
			spawn()
			continue
		}
		var we *campaign.WaitError
		switch {
		case errors.Is(err, campaign.ErrDone):
			return finish(nil)
		case errors.Is(err, campaign.ErrBudget):
			// The claims made are within the budget: they go, and are
			// recorded, before the run ends.
			return finish(err)
		case errors.Is(err, campaign.ErrPaused), errors.Is(err, campaign.ErrCancelled):
			// Claims still queued go back unsent; requests already made
			// finish and are recorded.
			e.paused.Store(true)
			return finish(err)
		case errors.As(err, &we):
		default:
			fail(err)
			return finish(nil)
		}
		if we.Reason == campaign.WaitTokens || we.Reason == campaign.WaitGlobal {
			slots.tokensPaced()
		}
		if (we.Reason == campaign.WaitCapped || we.Reason == campaign.WaitReach) && o.StopWhenCapped {
			// An answer still to come may give quota or reach back (a
			// failure refunds both): stop only once none can.
			if again, err := ownAnswers(gen); err != nil {
				return finish(err)
			} else if again {
				continue
			}
			if err := e.settleOthers(ctx, bg, r.ID); err != nil {
				fail(err)
				return finish(nil)
			}
			if we.Reason == campaign.WaitReach {
				return finish(&ReachError{Until: we.Until})
			}
			return finish(ErrCapped)
		}
		if we.Reason == campaign.WaitRetry && o.LongWait > 0 && we.Until.Sub(now) > o.LongWait {
			if err := e.settleOthers(ctx, bg, r.ID); err != nil {
				fail(err)
				return finish(nil)
			}
			return finish(fmt.Errorf("%w until %s", ErrRescheduled, we.Until.UTC().Format(time.RFC3339)))
		}
		if waiting == nil || waiting.Reason != we.Reason {
			o.Observe(Event{Kind: EventWait, At: now, Wait: we})
		}
		waiting = we
		if we.Reason == campaign.WaitInFlight {
			// Only our own rows can change this: no timer, so a simulated
			// clock doesn't race ahead of real requests.
			if again, err := ownAnswers(gen); err != nil {
				return finish(err)
			} else if again {
				continue
			}
		}
		wait := o.Poll
		if !we.Until.IsZero() {
			wait = min(max(we.Until.Sub(now), 0), o.Poll)
		}
		select {
		case <-o.Clock.After(wait):
		case <-done:
		case <-ctx.Done():
			return finish(ctx.Err())
		}
	}
}

// rateEvery is how often the engine asks the ledger for the accounts'
// allowed rate.
const rateEvery = time.Second

// record commits outcomes as they come, grouping whatever is waiting into
// one transaction, then reports them. Grouping trades a few milliseconds of
// exposure (a crash then leaves those rows unknown, never sent twice) for
// far fewer commits.
//
// commit stores a batch and says how many of its places in the window it
// handed on to rows claimed in the same transaction; committed gets the
// others back.
func (e *Engine) record(results <-chan campaign.Result, limit func() int,
	commit func([]campaign.Result) (kept int, err error), committed func(n int), fail func(error)) {
	batch := make([]campaign.Result, 0, maxBatch)
	window := errorWindow{ratio: e.o.ErrorPauseRatio, sample: minSample(e.o.Campaign.Imported)}
	linger := time.NewTimer(0)
	for res := range results {
		want := min(recordMin, limit())
		batch = append(batch[:0], res)
		linger.Reset(recordLinger)
	gather:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-results:
				if !ok {
					break gather
				}
				batch = append(batch, r)
				continue
			default:
			}
			if len(batch) >= want {
				break
			}
			select {
			case r, ok := <-results:
				if !ok {
					break gather
				}
				batch = append(batch, r)
			case <-linger.C:
				break gather
			}
		}
		for i := range batch {
			if batch[i].Outcome.Class == ClassNotSent {
				continue // no request: not an attempt the ratio judges
			}
			if reason := window.add(batch[i].Outcome.Class == whatsapp.ClassPermanent.String()); reason != "" {
				batch[i].Outcome.Pause = reason
				// Before the commit: claims queued meanwhile go back unsent.
				e.paused.Store(true)
			}
		}
		kept, err := commit(batch)
		// Rows refused by their fence are no longer this runner's: the
		// rest is recorded; they are dropped, said once, never resent.
		var fenced *campaign.FenceError
		lost := map[int64]bool{}
		if errors.As(err, &fenced) {
			err = nil
			for _, id := range fenced.Rows {
				lost[id] = true
			}
			e.o.Observe(Event{Kind: EventLost, At: e.o.Clock.Now(), Count: len(fenced.Rows)})
		}
		if err != nil {
			fail(fmt.Errorf("record outcomes: %w", err))
			committed(len(batch))
			continue
		}
		for _, r := range batch {
			if lost[r.Claim.Message.ID] {
				continue
			}
			out := r.Outcome
			e.o.Observe(Event{Kind: eventKinds[out.Kind], At: r.At, Claim: r.Claim, Outcome: out})
			if out.Throttle != nil || out.Restrict > 0 || out.DropAccount {
				e.o.Observe(Event{Kind: EventAccount, At: r.At, Claim: r.Claim, Outcome: out})
			}
			if out.Pause != "" {
				e.o.Observe(Event{Kind: EventPaused, At: r.At, Claim: r.Claim, Outcome: out})
			}
		}
		committed(len(batch) - kept)
	}
}

var eventKinds = map[campaign.OutcomeKind]EventKind{
	campaign.OutcomeSent: EventSent, campaign.OutcomeRetry: EventRetry,
	campaign.OutcomeFailed: EventFailed, campaign.OutcomeUnknown: EventUnknown,
}

// heartbeat keeps the runner's lease fresh until stopped.
func (e *Engine) heartbeat(ctx context.Context) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(e.o.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				// A missed beat only risks another runner calling our rows
				// unknown, never a double send: ignore the error, except
				// that a runner taken for dead registers again.
				now := e.o.Clock.Now()
				if err := e.o.Ledger.Heartbeat(ctx, e.o.Runner.ID, now); errors.Is(err, campaign.ErrNotFound) {
					r := e.o.Runner
					r.CampaignID, r.StartedAt, r.HeartbeatAt = e.o.Campaign.ID, now, now
					_ = e.o.Ledger.RegisterRunner(ctx, r)
				}
				e.watchStop(ctx)
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// watchStop asks the ledger whether the campaign was paused or cancelled
// from elsewhere. If so, claims queued here go back unsent and Run ends at
// its next turn: within a heartbeat, even while every slot waits on a slow
// request or the loop waits for tokens.
func (e *Engine) watchStop(ctx context.Context) {
	err := e.o.Ledger.CampaignStopped(ctx, e.o.Campaign.ID)
	if errors.Is(err, campaign.ErrPaused) || errors.Is(err, campaign.ErrCancelled) {
		// In this order: the loop must be sure to end before queued
		// claims are put back, or it would claim them again.
		e.stop.Store(&err)
		e.paused.Store(true)
	}
}

// admit says whether c's request may be made now, with the token to make
// it; if not, what to record instead.
func (e *Engine) admit(c campaign.Claim) (token string, res campaign.Result, ok bool) {
	_, dropped := e.dropped.Load(c.Account.ID)
	token, err := e.o.Token(c.Account.TokenEnv)
	switch {
	case dropped || e.paused.Load() || e.rests(c.Account.ID):
		return "", e.putBack(c, "not sent: the account or campaign stopped meanwhile"), false
	case err != nil:
		// No token: the account can't send for this campaign; its rows go
		// to the others.
		return "", e.settle(&c, campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: e.o.Clock.Now(), Refund: true,
			DropAccount: true, Class: whatsapp.ClassAccountFatal.String(),
			Error: fmt.Sprintf("account %s: %v", c.Account.Name, err)}), false
	}
	return token, campaign.Result{}, true
}

// attempt makes one job's request, in the place in flight the pacer gave
// it at start, and decides what to record.
func (e *Engine) attempt(ctx context.Context, j job, p *pacer) campaign.Result {
	o := &e.o // not a copy: Options is ~800 bytes, and this runs for every message
	c := &j.c // by pointer below: a claim is 440 bytes
	answered, failed := false, false
	defer func() { p.endSend(j.start, answered, failed) }()
	req := Request(o.Campaign, *c, j.token)
	req.Marketing = o.Endpoint.marketing(c.Account)
	resp, err := o.Sender.Send(ctx, req)
	free := e.observe(ctx, c, err)
	out := e.outcome(c, resp, err)
	e.react(ctx, c, err, &out, o.Clock.Now())
	if free || e.givingUpInOutage(ctx, err, out) {
		out = outageRetry(out, err, o.Clock.Now())
	}
	class := whatsapp.Classify(err)
	answered, failed = true, class == whatsapp.ClassTransient || class == whatsapp.ClassAmbiguous
	if class == whatsapp.ClassOK {
		p.accepted()
	}
	return e.settle(c, out)
}

// settle notes what an outcome tells this engine before the ledger knows
// it (a dropped account, a rest, a pause) and returns the result to record.
func (e *Engine) settle(c *campaign.Claim, out campaign.Outcome) campaign.Result {
	o := &e.o
	if out.DropAccount {
		e.dropped.Store(c.Account.ID, struct{}{})
	}
	if t := out.Throttle; t != nil {
		// Claims already queued for the account must not hit the API
		// during its rest; the ledger keeps new ones away.
		key := c.Account.ID
		if t.App {
			key = 0
		}
		// The rest the reaction decided, which the ledger stores too:
		// never longer than the ledger's, or claims would spin (the
		// ledger hands out what this engine puts back).
		if t.Cooldown > 0 {
			e.resting.Store(key, o.Clock.Now().Add(t.Cooldown))
		}
	}
	if out.Pause != "" {
		e.paused.Store(true)
	}
	return campaign.Result{Claim: *c, Outcome: out, At: o.Clock.Now()}
}

// putBack returns a claim to pending without a request: its token stays
// spent, its quota and retry budget are given back.
func (e *Engine) putBack(c campaign.Claim, why string) campaign.Result {
	now := e.o.Clock.Now()
	return campaign.Result{Claim: c, At: now, Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now,
		Refund: true, Class: ClassNotSent, Error: why}}
}

// rests reports whether the account (or the whole app) was throttled and
// is still resting, by this engine's own knowledge.
func (e *Engine) rests(accountID int64) bool {
	now := e.o.Clock.Now()
	for _, key := range []int64{accountID, 0} {
		if until, ok := e.resting.Load(key); ok && now.Before(until.(time.Time)) {
			return true
		}
	}
	return false
}

// TemplateSyncWait is how long a row waits after the Marketing Messages API
// answered 131009 (the template is still syncing, minutes by Meta's word);
// UpgradePause how long a number rests after 131057 (a throughput upgrade
// takes about a minute).
const (
	TemplateSyncWait = time.Minute
	UpgradePause     = time.Minute
)

// outcome turns a response into what to record, following the class the
// Cloud API client gave the answer
// (docs/cloud-api.md#error-codes-and-what-wasend-does). Only an answer that
// proves the message was not accepted gives its daily quota back, and only
// transient errors spend the row's retry budget.
func (e *Engine) outcome(c *campaign.Claim, resp whatsapp.Response, err error) campaign.Outcome {
	o := &e.o
	now := o.Clock.Now()
	class := whatsapp.Classify(err)
	out := campaign.Outcome{Error: errorText(err), Class: class.String()}
	var hint time.Duration
	if err != nil { // errors.As's target escapes: no allocation for a nil error
		var apiErr *whatsapp.APIError
		if errors.As(err, &apiErr) {
			out.ErrorCode, hint = apiErr.Code, apiErr.RetryAfter
		}
	}
	// requeue puts the row back for any account, at no cost to its budget.
	requeue := func(at time.Time) campaign.Outcome {
		out.Kind, out.RetryAt, out.Refund = campaign.OutcomeRetry, at, true
		return out
	}
	switch class {
	case whatsapp.ClassOK:
		return campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: resp.WAMID, Class: class.String(), Held: resp.Held()}
	case whatsapp.ClassAmbiguous:
		// It may have been delivered: never resent without an operator.
		out.Kind = campaign.OutcomeUnknown
		return out
	case whatsapp.ClassThrottled:
		out.Throttle = &campaign.Throttle{Cooldown: o.Cooldown, Hint: hint, App: out.ErrorCode == 4}
		return requeue(now)
	case whatsapp.ClassPairThrottled:
		// Only this recipient waits, 4^X seconds (Meta's advice), X the
		// attempts so far; the account keeps sending to others.
		delay := time.Duration(math.Pow(4, float64(min(c.Message.Attempts, 6)))) * time.Second
		if hint > 0 {
			delay = hint
		}
		return requeue(now.Add(delay))
	case whatsapp.ClassLongRestriction:
		out.Restrict = o.Restriction
		return requeue(now)
	case whatsapp.ClassTemplateSyncing:
		// A template new to the Marketing Messages API syncs for minutes:
		// the row waits, costing no attempt, and says why.
		out.Error = "waiting for the template to sync to the Marketing Messages API: " + out.Error
		delay := TemplateSyncWait
		if hint > 0 {
			delay = hint
		}
		return requeue(now.Add(delay))
	case whatsapp.ClassNumberUpgrading:
		// The number is being upgraded to a higher throughput: it rests a
		// minute at its rate, and the row goes again, costing no attempt.
		out.Error = "the number is in maintenance for a throughput upgrade: " + out.Error
		out.Throttle = &campaign.Throttle{Cooldown: UpgradePause, Hint: hint, Upgrade: true}
		return requeue(now)
	case whatsapp.ClassCampaignFatal:
		// The row is put back as it was: once the template or the list
		// is fixed, it goes with the others.
		out.Pause = e.fatalReason(out.ErrorCode, out.Error)
		return requeue(now)
	case whatsapp.ClassAccountFatal:
		out.DropAccount = true
		return requeue(now)
	case whatsapp.ClassTransient:
		out.Refund = true
		if c.Message.Retries+1 >= o.MaxAttempts {
			out.Kind = campaign.OutcomeFailed
			out.Error = fmt.Sprintf("gave up after %d attempts: %s", c.Message.Retries+1, out.Error)
			return out
		}
		delay := e.backoff(c.Message.Retries)
		if hint > 0 {
			delay = hint
		}
		out.Kind, out.RetryAt, out.SpendsRetry = campaign.OutcomeRetry, now.Add(delay), true
		return out
	default: // permanent for the row
		out.Kind, out.Refund = campaign.OutcomeFailed, true
		out.Suppress = out.ErrorCode == 131050 // the person stopped marketing messages
		return out
	}
}

// fatalReason is the pause reason of a campaign-fatal answer: the code,
// the template, what the rows send, and what to fix before resuming.
func (e *Engine) fatalReason(code int, errText string) string {
	spec := e.o.Campaign.Spec
	reason := fmt.Sprintf("error %d: %s", code, errText)
	if spec.Kind == campaign.KindTemplate {
		reason = fmt.Sprintf("error %d for template %s (%s) filled with %s: %s", code, spec.Template, spec.Lang, sendsText(spec), errText)
	}
	if fix := whatsapp.Remedy(code); fix != "" {
		reason += "; fix: " + fix
	}
	return reason
}

// sendsText says which parameters a template campaign fills in every row.
func sendsText(s campaign.Spec) string {
	kind := "positional"
	if s.NamedParams {
		kind = "named"
	}
	out := fmt.Sprintf("%d %s body parameter(s)", len(s.Params), kind)
	if len(s.Params) > 0 {
		out += " (" + strings.Join(s.Params, ", ") + ")"
	}
	if s.Header != nil {
		out += fmt.Sprintf(", a %s header", s.Header.Type)
	}
	if len(s.Buttons) > 0 {
		out += fmt.Sprintf(", %d URL button parameter(s)", len(s.Buttons))
	}
	return out
}

// errorWindow watches the share of permanent failures over the last
// attempts of this engine and says when it crosses the pause ratio.
type errorWindow struct {
	ratio  float64
	sample int // attempts needed before the ratio counts (minSample)
	ring   [100]bool
	n, bad int
	next   int
	fired  bool
}

// minWindow attempts are needed before the ratio means anything — or, in a
// campaign of fewer rows, as many attempts as it has rows, but never fewer
// than minSmall: the share of 1 in 2 says nothing.
const (
	minWindow = 20
	minSmall  = 5
)

// minSample is the attempts the ratio needs in a campaign of rows rows (0:
// not known).
func minSample(rows int) int {
	if rows <= 0 {
		return minWindow
	}
	return max(min(minWindow, rows), minSmall)
}

func (w *errorWindow) add(permanent bool) (pause string) {
	if w.ratio <= 0 {
		return ""
	}
	if w.n == len(w.ring) {
		if w.ring[w.next] {
			w.bad--
		}
	} else {
		w.n++
	}
	w.ring[w.next] = permanent
	if permanent {
		w.bad++
	}
	w.next = (w.next + 1) % len(w.ring)
	if w.fired || w.n < w.sample || float64(w.bad) <= w.ratio*float64(w.n) {
		return ""
	}
	w.fired = true
	return fmt.Sprintf("%d of the last %d attempts failed permanently (over %.0f%%): check the list and the template before resuming",
		w.bad, w.n, w.ratio*100)
}

// backoff is full-jitter exponential backoff: a uniform delay in
// [0, min(max, base·2^n)).
func (e *Engine) backoff(n int) time.Duration {
	ceiling := float64(e.o.BackoffBase) * math.Pow(2, float64(n))
	ceiling = math.Min(ceiling, float64(e.o.BackoffMax))
	return time.Duration(e.o.Rand() * ceiling)
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Endpoint is what chooses a send's endpoint (campaign.UseMarketing): the
// campaign's --api, its template's category as template sync read it, and
// which numbers' WABAs are onboarded to the Marketing Messages API.
type Endpoint struct {
	API       campaign.API
	Category  string
	Onboarded func(campaign.Account) bool // nil: none is
}

func (p Endpoint) marketing(a campaign.Account) bool {
	return campaign.UseMarketing(p.API, p.Category, p.Onboarded != nil && p.Onboarded(a))
}

// Request builds the Cloud API request for a claimed message.
func Request(c campaign.Campaign, cl campaign.Claim, token string) whatsapp.Request {
	req := whatsapp.Request{
		PhoneNumberID: cl.Account.PhoneNumberID,
		Token:         token,
		To:            cl.Message.Phone,
		CallbackData:  campaign.CallbackData(c.ID, cl.Message.ID),
	}
	if c.Spec.Kind == campaign.KindText {
		req.Text = cl.Message.Body
	} else {
		req.Template = template(c.Spec, cl.Message)
	}
	return req
}

// template fills the spec's template with one row's values. A row whose
// values do not match the spec (missing ones come out empty) is left for
// whatsapp.BuildBody to reject.
func template(s campaign.Spec, m campaign.Message) *whatsapp.Template {
	t := &whatsapp.Template{Name: s.Template, Lang: s.Lang, BodyParams: m.Params}
	if s.NamedParams {
		t.BodyNames = s.Params
	}
	if s.Header != nil {
		t.Header = &whatsapp.Header{Type: string(s.Header.Type), Value: m.Header}
	}
	for i, b := range s.Buttons {
		var v string
		if i < len(m.Buttons) {
			v = m.Buttons[i]
		}
		t.Buttons = append(t.Buttons, whatsapp.URLButton{Index: b.Index, Text: v})
	}
	return t
}
