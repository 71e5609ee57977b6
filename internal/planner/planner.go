// Package planner forecasts when a campaign will finish. It runs the
// store's scheduling rules — ratelimit.Pick choosing among accounts with a
// token and quota left, Bucket.TakeAt, daily caps that start again at each
// midnight, the optional global bucket, cool-downs — on a simulated clock,
// in memory: no database, no HTTP.
//
// The simulation jumps from one instant where something can change to the
// next. Without a global bucket, accounts don't compete for anything: each
// sends every token the moment it has one, so a whole quota day of an
// account is counted in closed form and a million messages take a few
// thousand steps. With a global bucket, accounts share its tokens and Pick
// decides who sends; the planner then steps message by message, and skips
// whole days once a day starts exactly as the one before it did.
package planner

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// AccountState is one account as the planner starts from it.
type AccountState struct {
	Name string
	Tier string
	// Limit is the account's rate and burst. With Health set, it is the
	// configured limit, which Health scales as the store does; otherwise
	// it is used as it is.
	Limit  ratelimit.Limit
	Health ratelimit.Health
	Bucket ratelimit.Bucket
	// Used counts the sends of the current quota day; DailyCap bounds them.
	Used     int
	DailyCap int
	// NotBefore holds the account back (a cool-down or restriction).
	NotBefore time.Time
}

// PortfolioState is a portfolio's messaging limit as the planner starts
// from it: the reach, the accounts (by name) that share it, and the latest
// send to each recipient in the window. Every recipient of the forecast is
// taken to be new to it.
type PortfolioState struct {
	Name     string
	Reach    ratelimit.Reach
	Accounts []string
	Latest   []time.Time
}

// Input is what a forecast starts from.
type Input struct {
	Start time.Time
	// Location decides the midnights at which quota days start again
	// (WASEND_TZ; cron's `wasend quota reset`). Nil means time.Local.
	Location *time.Location
	Messages int
	Accounts []AccountState
	// Global is the global bucket, nil when it is off.
	Global      *ratelimit.Bucket
	GlobalLimit ratelimit.Limit
	// Portfolios are the messaging limits the accounts share.
	Portfolios []PortfolioState
	// Window, when set, sends each of Groups only while its recipients'
	// window is open; Messages is then their sum.
	Window *campaign.Window
	Groups []Group
}

// Share is what one account sends of the forecast messages.
type Share struct {
	Name string
	Tier string
	Sent int
}

// Forecast is when the last message goes.
type Forecast struct {
	Start time.Time
	// Begin is when the first message may go (ETA: the campaign's start,
	// or its first retry time, when later than Start).
	Begin  time.Time
	Finish time.Time // zero when Capped
	// Duration is Finish - Start.
	Duration time.Duration
	// QuotaResets counts the midnights between Start and Finish: the quota
	// days after the first that the campaign needs.
	QuotaResets int
	// PerAccount lists every account, in Input order.
	PerAccount []Share
	// Capped is set when the messages can never all be sent; Reason says
	// why and Sent how many would go.
	Capped bool
	Reason string
	Sent   int
}

// Horizon bounds a forecast: a campaign that would take longer is
// reported as never finishing.
const Horizon = 100 * 365 * 24 * time.Hour

// epsilon matches ratelimit's tolerance for a token that is a rounding
// error short of whole.
const epsilon = 1e-9

// ErrInconsistent is a forecast that contradicted itself: its closed-form
// count and Pick, or Pick and a bucket, disagreed. It is a bug in the
// planner, never in its input; callers show it in place of the forecast.
var ErrInconsistent = errors.New("planner: forecast inconsistent")

// Plan forecasts when in.Messages messages will have been sent. It fails
// on an input no store holds (a rate or token count that is not a finite
// number) and on ErrInconsistent.
func Plan(in Input) (Forecast, error) {
	if err := in.check(); err != nil {
		return Forecast{}, err
	}
	s := newSim(in)
	s.run()
	if s.err != nil {
		return Forecast{}, s.err
	}
	return s.forecast(), nil
}

// check refuses numbers the simulation cannot count with. Everything
// else — a debt, a bucket settled after Start or over its burst, a cap
// already passed, a rate or burst of 0 — is a state a store can hold and
// is forecast as such.
func (in Input) check() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for _, a := range in.Accounts {
		for _, v := range []struct {
			what string
			x    float64
		}{{"rate", a.Limit.Rate}, {"tokens", a.Bucket.Tokens}, {"rate factor", a.Health.Factor}} {
			if !finite(v.x) {
				return fmt.Errorf("planner: account %q: %s %v is not a number to count with", a.Name, v.what, v.x)
			}
		}
	}
	if in.Global != nil && (!finite(in.GlobalLimit.Rate) || !finite(in.Global.Tokens)) {
		return fmt.Errorf("planner: global limit: rate %v, tokens %v: not numbers to count with", in.GlobalLimit.Rate, in.Global.Tokens)
	}
	return nil
}

// WithExtra returns in with one more account of tier: limits l, a full
// bucket and nothing sent yet. Plan(WithExtra(in, …)) answers "how much
// sooner with one more account of that tier".
func WithExtra(in Input, tier string, l campaign.Limits) Input {
	lim := ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
	out := in
	out.Accounts = append(append([]AccountState(nil), in.Accounts...), AccountState{
		Name:     "+1 " + tier,
		Tier:     tier,
		Limit:    lim,
		Bucket:   ratelimit.Full(lim, in.Start),
		DailyCap: l.DailyCap,
	})
	if in.Global != nil {
		g := *in.Global
		out.Global = &g
	}
	return out
}

// FromStatus turns an account as the store reports it into the planner's
// starting state. The store reports the rate factor settled at a.At, not
// when the last throttle was, so the recovery is assumed to start then:
// at most one quiet period optimistic.
func FromStatus(a campaign.AccountStatus) AccountState {
	s := AccountState{
		Name:      a.Name,
		Tier:      a.Tier,
		Limit:     ratelimit.Limit{Rate: a.Limits.Rate, Burst: a.Limits.Burst},
		Bucket:    ratelimit.Bucket{Tokens: a.Tokens, At: a.At},
		Used:      a.UsedToday,
		DailyCap:  a.Limits.DailyCap,
		NotBefore: a.CooldownUntil,
	}
	if a.RateFactor > 0 && a.RateFactor < 1 {
		s.Health = ratelimit.Health{Factor: a.RateFactor, FactorSince: a.At.Add(-ratelimit.QuietPeriod)}
	}
	return s
}

// sim is the simulated world: the candidates Pick sees, and what was sent.
type sim struct {
	in     Input
	loc    *time.Location
	t      time.Time
	dayEnd time.Time // the next midnight: quotas start again there
	cands  []ratelimit.Candidate
	limits []ratelimit.Limit // configured, before health
	health []ratelimit.Health
	global *ratelimit.Bucket
	sent   []int
	left   int
	finish time.Time
	reason string
	err    error // ErrInconsistent: the forecast stops
	// horizon: a forecast past it is given up.
	horizon time.Time
	// recovered: every account runs at its configured rate from now on.
	recovered bool
	// stepOnly turns off the closed-form count and the day skipping, so
	// tests can check them against plain stepping. A send window steps
	// too: which messages may go changes through the day.
	stepOnly bool
	// reach: each portfolio's window, and each account's portfolio (-1:
	// none). A limited portfolio makes accounts compete: the planner then
	// steps message by message.
	reach   []*ratelimit.ReachQueue
	reachOf []int
	reachOn bool
	win     *window
}

func newSim(in Input) *sim {
	s := &sim{in: in, loc: in.Location, t: in.Start, left: max(in.Messages, 0), horizon: in.Start.Add(Horizon)}
	if s.loc == nil {
		s.loc = time.Local
	}
	s.dayEnd = nextMidnight(in.Start, s.loc)
	n := len(in.Accounts)
	s.cands = make([]ratelimit.Candidate, n)
	s.limits = make([]ratelimit.Limit, n)
	s.health = make([]ratelimit.Health, n)
	s.sent = make([]int, n)
	for i, a := range in.Accounts {
		s.limits[i], s.health[i] = a.Limit, a.Health
		nb := a.NotBefore
		if a.Health.CooldownUntil.After(nb) {
			nb = a.Health.CooldownUntil
		}
		s.cands[i] = ratelimit.Candidate{Bucket: a.Bucket, Used: a.Used, DailyCap: a.DailyCap, NotBefore: nb}
	}
	if in.Global != nil {
		g := *in.Global
		s.global = &g
	}
	s.reachOf = make([]int, n)
	account := map[string]int{}
	for i, a := range in.Accounts {
		s.reachOf[i], account[a.Name] = -1, i
	}
	for _, p := range in.Portfolios {
		if !p.Reach.Limited() {
			continue
		}
		k := len(s.reach)
		s.reach = append(s.reach, ratelimit.NewReachQueue(p.Reach, p.Latest))
		for _, name := range p.Accounts {
			if i, ok := account[name]; ok {
				s.reachOf[i], s.reachOn = k, true
			}
		}
	}
	if s.reachOn {
		s.stepOnly = true
	}
	if in.Window != nil {
		s.win, s.stepOnly = newWindow(*in.Window, in.Groups), true
	}
	s.refresh()
	return s
}

// nextMidnight is the first midnight in loc after t.
func nextMidnight(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// refresh sets each candidate's limit and standing at s.t, as the store's
// claim does with the account's health.
func (s *sim) refresh() {
	if s.recovered {
		return
	}
	for i := range s.cands {
		s.cands[i].Limit = s.health[i].Scale(s.limits[i], s.t)
		s.cands[i].Demoted = s.health[i].Demoted(s.t)
	}
}

// healthy reports whether every account is back to its configured rate.
// Nothing throttles an account in a forecast, so it stays so.
func (s *sim) healthy() bool {
	if s.recovered {
		return true
	}
	for i := range s.health {
		if s.health[i].Demoted(s.t) {
			return false
		}
	}
	s.recovered = true
	for i := range s.cands {
		s.cands[i].Limit, s.cands[i].Demoted = s.limits[i], false
	}
	return true
}

func (s *sim) run() {
	if s.left == 0 {
		s.finish = s.t
		return
	}
	if why := s.hopeless(); why != "" {
		s.reason = why
		return
	}
	var ref *dayRecord // the last whole day simulated
	for {
		dayStart, atMidnight := s.t, !s.t.Equal(s.in.Start)
		snap := s.snapshot()
		if ref != nil && atMidnight && !s.stepOnly && ref.repeats(snap, s.dayEnd.Sub(dayStart)) {
			s.skipDays(ref)
			dayStart, snap = s.t, s.snapshot()
		}
		if s.day() || s.reason != "" || s.err != nil {
			return
		}
		if atMidnight {
			ref = &dayRecord{start: snap, length: s.dayEnd.Sub(dayStart), sent: s.sentSince(snap)}
		}
		if !s.dayEnd.Before(s.horizon) {
			s.reason = "it would take more than 100 years"
			return
		}
		// cron's `wasend quota reset` at midnight.
		s.t = s.dayEnd
		s.dayEnd = nextMidnight(s.t, s.loc)
		for i := range s.cands {
			s.cands[i].Used = 0
		}
		s.refresh()
	}
}

// dead says why nothing can be sent, ever, whatever the quotas: every
// account (or the global bucket) lacks a cap, a burst or a rate — Pick
// never chooses a bucket without a rate, whatever it holds.
func (s *sim) dead() string {
	never := func(l ratelimit.Limit) bool { return l.Burst < 1 || !(l.Rate > 0) }
	if s.global != nil && never(s.in.GlobalLimit) {
		return "the global limit allows nothing (rate or burst 0)"
	}
	for i, c := range s.cands {
		if k := s.reachOf[i]; k >= 0 && s.reach[k].Reach.Allowed() == 0 {
			continue
		}
		if c.DailyCap > 0 && !never(s.limits[i]) {
			return ""
		}
	}
	return "no account can send any more: daily caps, rates, bursts or messaging limits allow nothing"
}

// hopeless says why nothing can ever be sent, judged before simulating.
func (s *sim) hopeless() string {
	if len(s.cands) == 0 {
		return "no usable account"
	}
	capped := true
	for _, c := range s.cands {
		if c.DailyCap > 0 {
			capped = false
		}
	}
	if capped {
		return "every account's daily cap is 0"
	}
	return s.dead()
}

func (s *sim) total() int {
	n := 0
	for _, k := range s.sent {
		n += k
	}
	return n
}

// day runs the quota day from s.t to s.dayEnd, or until the last message.
// It reports whether the last message went.
func (s *sim) day() bool {
	for s.t.Before(s.dayEnd) {
		if s.healthy() && s.global == nil && !s.stepOnly {
			return s.countDay()
		}
		if s.step() {
			return true
		}
	}
	return false
}

// step sends what can go at s.t, exactly as a claim does, then moves s.t to
// the next instant anything can change (at most the day's end). It reports
// whether the last message went.
func (s *sim) step() bool {
	s.refresh()
	for {
		if s.waitForWindow() {
			return false
		}
		d, freed := s.pick()
		if d.Index < 0 {
			next := d.Until
			if d.Reason != ratelimit.ReasonTokens && d.Reason != ratelimit.ReasonGlobal {
				next = time.Time{} // only a quota day or a window helps
			}
			if !freed.IsZero() && (next.IsZero() || freed.Before(next)) {
				next = freed
			}
			// A recovering rate makes tokens come sooner than Pick can
			// tell: look again at least once a second meanwhile.
			if !s.healthy() {
				if soon := s.t.Add(time.Second); next.IsZero() || soon.Before(next) {
					next = soon
				}
			}
			// Nothing goes before the global bucket has a token: don't
			// stop at the instants accounts refill meanwhile.
			if s.global != nil && d.Reason == ratelimit.ReasonTokens {
				if g := s.global.ReadyAt(s.in.GlobalLimit, s.t, 1); g.After(next) {
					next = g
				}
			}
			if next.IsZero() || next.After(s.dayEnd) {
				next = s.dayEnd
			}
			s.t = next
			return false
		}
		if !s.take(d.Index) {
			return true
		}
		if s.left == 0 {
			s.finish = s.t
			return true
		}
	}
}

// pick is Pick among the accounts whose portfolio has room at s.t; freed
// is the earliest instant a full portfolio makes room (zero: none full).
func (s *sim) pick() (d ratelimit.Decision, freed time.Time) {
	if !s.reachOn {
		return ratelimit.Pick(s.t, s.cands, s.global, s.in.GlobalLimit), time.Time{}
	}
	full := make([]bool, len(s.reach))
	for k, q := range s.reach {
		ok, until := q.Room(s.t)
		if !ok {
			full[k] = true
			if freed.IsZero() || until.Before(freed) {
				freed = until
			}
		}
	}
	var (
		open []ratelimit.Candidate
		idx  []int
	)
	for i, c := range s.cands {
		if k := s.reachOf[i]; k < 0 || !full[k] {
			open, idx = append(open, c), append(idx, i)
		}
	}
	d = ratelimit.Pick(s.t, open, s.global, s.in.GlobalLimit)
	if d.Index >= 0 {
		d.Index = idx[d.Index]
	}
	return d, freed
}

// take sends one message from account i at s.t. It reports false, with
// s.err set, when the account or the global bucket has no token after all.
func (s *sim) take(i int) bool {
	c := &s.cands[i]
	b, ok := c.Bucket.TakeAt(c.Limit, s.t, 1)
	if !ok {
		s.fail("Pick chose account %q without a token (%v at %v)", s.in.Accounts[i].Name, c.Bucket.TokensAt(c.Limit, s.t), s.t)
		return false
	}
	if s.global != nil {
		g, ok := s.global.TakeAt(s.in.GlobalLimit, s.t, 1)
		if !ok {
			s.fail("Pick chose without a global token (%v at %v)", s.global.TokensAt(s.in.GlobalLimit, s.t), s.t)
			return false
		}
		*s.global = g
	}
	if k := s.reachOf[i]; k >= 0 {
		s.reach[k].Add(s.t)
	}
	c.Bucket, c.Used = b, c.Used+1
	s.sent[i]++
	s.left--
	if s.win != nil {
		s.win.take()
	}
	return true
}

// fail stops the forecast with ErrInconsistent.
func (s *sim) fail(format string, args ...any) {
	s.err = fmt.Errorf("%w: "+format, append([]any{ErrInconsistent}, args...)...)
}

// run is one account's sends within a quota day when it competes with
// nobody: from start, it sends the floor of its tokens at once and then
// every token the moment it is whole, until its cap.
//
// It models the bucket exactly as Bucket does: tokens are earned from the
// bucket's own instant, never before it (a store settles a bucket when it
// reads its clock, which may be after the forecast's start), so refilling
// counts from origin; and a bucket in debt (a high-priority campaign
// borrowed) sends nothing until the debt is earned back.
type run struct {
	start  time.Time // the first instant it may send
	origin time.Time // the bucket earns from here: start, or the bucket's instant when later
	tokens float64   // at origin, and held unchanged from start to origin
	rate   float64
	quota  int // sends left in the day
}

func (s *sim) runOf(i int) run {
	c := s.cands[i]
	r := run{start: s.t, rate: c.Limit.Rate, quota: max(c.DailyCap-c.Used, 0)}
	if c.NotBefore.After(r.start) {
		r.start = c.NotBefore
	}
	r.origin = r.start
	if c.Bucket.At.After(r.origin) {
		r.origin = c.Bucket.At
	}
	if c.Limit.Burst < 1 || !(r.rate > 0) || !r.start.Before(s.dayEnd) {
		r.quota = 0
	}
	r.tokens = c.Bucket.TokensAt(c.Limit, r.origin)
	return r
}

// count is the number of sends at or before t: those whose instant, as at
// gives it, is not after t. It is never negative, a debt included.
func (r run) count(t time.Time) int {
	if r.quota == 0 || t.Before(r.start) {
		return 0
	}
	now := r.floor(r.tokens + epsilon)
	if t.Before(r.origin) {
		return now
	}
	k := max(now, r.floor(r.tokens+t.Sub(r.origin).Seconds()*r.rate))
	// Float rounding may put the floor one off at an instant's edge.
	for k > now && r.at(k).After(t) {
		k--
	}
	for k < r.quota && !r.at(k+1).After(t) {
		k++
	}
	return k
}

// floor is ⌊x⌋ between 0 and the quota.
func (r run) floor(x float64) int {
	switch x = math.Floor(x); {
	case !(x > 0):
		return 0
	case x >= float64(r.quota):
		return r.quota
	}
	return int(x)
}

// at is the instant of the k-th send (k ≥ 1), rounded up to the
// nanosecond as Bucket.ReadyAt rounds a wait.
func (r run) at(k int) time.Time {
	missing := float64(k) - r.tokens
	if missing <= epsilon {
		return r.start
	}
	return addSeconds(r.origin, missing/r.rate)
}

// addSeconds is t plus sec seconds rounded up to the nanosecond; a wait
// beyond what a Duration holds is the longest one.
func addSeconds(t time.Time, sec float64) time.Time {
	ns := math.Ceil(sec * float64(time.Second))
	if !(ns < math.MaxInt64) {
		return t.Add(math.MaxInt64)
	}
	return t.Add(time.Duration(ns))
}

// countDay counts the rest of the day in closed form, the accounts being
// independent. When the last message falls in it, the instant is found by
// bisection and the sends of that instant are handed out by Pick.
func (s *sim) countDay() bool {
	runs := make([]run, len(s.cands))
	last := s.dayEnd.Add(-1) // sends at the midnight itself count on the next day
	total := 0
	for i := range s.cands {
		runs[i] = s.runOf(i)
		total += runs[i].count(last)
	}
	if total < s.left {
		for i := range runs {
			s.spend(i, runs[i], runs[i].count(last), last)
		}
		s.t = s.dayEnd
		return false
	}
	upTo := func(t time.Time) int {
		n := 0
		for _, r := range runs {
			n += r.count(t)
		}
		return n
	}
	lo, hi := s.t, last // upTo(hi) ≥ left; find the first such instant
	if upTo(lo) < s.left {
		for hi.Sub(lo) > 1 {
			mid := lo.Add(hi.Sub(lo) / 2)
			if upTo(mid) >= s.left {
				hi = mid
			} else {
				lo = mid
			}
		}
	} else {
		hi = lo
	}
	before := hi.Add(-1)
	for i := range runs {
		s.spend(i, runs[i], runs[i].count(before), before)
	}
	// At the finishing instant several accounts may have a token and
	// fewer messages be left: Pick chooses, as in a claim.
	s.t = hi
	s.refresh()
	for i := range runs {
		c := &s.cands[i]
		k := runs[i].count(hi) - runs[i].count(before)
		c.DailyCap = c.Used + k // offer exactly the sends the count found
	}
	for s.left > 0 {
		d := ratelimit.Pick(s.t, s.cands, nil, ratelimit.Limit{})
		if d.Index < 0 {
			s.fail("the closed-form count has %d more to send at %v, Pick finds no account ready (%s)", s.left, s.t, d.Reason)
			return true
		}
		if !s.take(d.Index) {
			return true
		}
	}
	s.finish = s.t
	return true
}

// spend books k sends of run r, counted up to bound, on account i: its
// bucket as it stands after the k-th send.
func (s *sim) spend(i int, r run, k int, bound time.Time) {
	if k <= 0 {
		return
	}
	c := &s.cands[i]
	at := r.at(k)
	if at.After(bound) { // a rounding error's worth
		at = bound
	}
	if at.Before(r.origin) { // sent from what it held: it earns from origin on
		at = r.origin
	}
	tokens := r.tokens - float64(k) + at.Sub(r.origin).Seconds()*r.rate
	c.Bucket = ratelimit.Bucket{Tokens: max(tokens, 0), At: at}
	c.Used += k
	s.sent[i] += k
	s.left -= k
}

// snapshot is the world at a midnight, relative to it: what must be equal
// for two quota days to run alike.
type snapshot struct {
	tokens []float64
	global float64
	sent   []int // cumulative sends, to tell what a day sent
	ok     bool  // no cool-down ahead, every account healthy
}

type dayRecord struct {
	start  snapshot
	length time.Duration
	sent   []int // sends per account during the day
}

func (s *sim) snapshot() snapshot {
	sn := snapshot{ok: s.healthy(), tokens: make([]float64, len(s.cands)), sent: append([]int(nil), s.sent...)}
	for i, c := range s.cands {
		// A bucket settled ahead earns from its own instant: a day
		// starting with it runs unlike one starting with a settled one.
		if c.NotBefore.After(s.t) || c.Bucket.At.After(s.t) {
			sn.ok = false
		}
		sn.tokens[i] = c.Bucket.TokensAt(c.Limit, s.t)
	}
	if s.global != nil {
		sn.global = s.global.TokensAt(s.in.GlobalLimit, s.t)
	}
	return sn
}

// sentSince returns the sends per account since the snapshot.
func (s *sim) sentSince(from snapshot) []int {
	out := make([]int, len(s.sent))
	for i := range s.sent {
		out[i] = s.sent[i] - from.sent[i]
	}
	return out
}

// repeats says whether a day starting in state now, length long, runs as
// the recorded one did: same state, same length, every account healthy.
func (d *dayRecord) repeats(now snapshot, length time.Duration) bool {
	if !d.start.ok || !now.ok || d.length != length {
		return false
	}
	for i := range now.tokens {
		if now.tokens[i] != d.start.tokens[i] {
			return false
		}
	}
	return now.global == d.start.global
}

// skipDays books whole days that run as ref did, leaving the day that
// sends the last message (or one of another length) to be simulated.
func (s *sim) skipDays(ref *dayRecord) {
	perDay := 0
	for _, k := range ref.sent {
		perDay += k
	}
	if perDay == 0 {
		return
	}
	start := ref.start
	for s.left > perDay && s.dayEnd.Sub(s.t) == ref.length && s.dayEnd.Before(s.horizon) {
		for i, k := range ref.sent {
			s.sent[i] += k
		}
		s.left -= perDay
		s.t = s.dayEnd
		s.dayEnd = nextMidnight(s.t, s.loc)
	}
	// The buckets stand as they did at the reference midnight.
	for i := range s.cands {
		s.cands[i].Bucket = ratelimit.Bucket{Tokens: start.tokens[i], At: s.t}
		s.cands[i].Used = 0
	}
	if s.global != nil {
		*s.global = ratelimit.Bucket{Tokens: start.global, At: s.t}
	}
	s.refresh()
}

func (s *sim) forecast() Forecast {
	f := Forecast{Start: s.in.Start, Begin: s.in.Start, Sent: s.total()}
	for i, a := range s.in.Accounts {
		f.PerAccount = append(f.PerAccount, Share{Name: a.Name, Tier: a.Tier, Sent: s.sent[i]})
	}
	if s.finish.IsZero() {
		f.Capped, f.Reason = true, s.reason
		return f
	}
	f.Finish = s.finish
	f.Duration = s.finish.Sub(s.in.Start)
	for m := nextMidnight(s.in.Start, s.loc); !m.After(s.finish); m = nextMidnight(m, s.loc) {
		f.QuotaResets++
	}
	return f
}
