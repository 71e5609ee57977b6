package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/ratelimit"
)

// Reference is the reference model of the gate: the rules in memory, on
// internal/ratelimit's arithmetic, with an injected clock. It is what the
// Redis gate is held to (package limitstest runs the same steps against
// both), and a gate for one process when nothing is shared.
type Reference struct {
	now func() time.Time

	mu      sync.Mutex
	gen     string // empty: no state (never started, or lost)
	buckets map[string]storedBucket
	global  *storedBucket
	day     map[string]string // account → current DayID
	used    map[dayKey]int
	claims  map[string]claimRecord
	memos   map[string]memo // recipient → their latest admission
	guards  map[guardKey]guardClaim
	// rebuilt is the generation a Rebuild started (empty: none), and
	// contributed the hosts that added their part to it.
	rebuilt     string
	contributed map[string]bool
	rebuiltDay  map[string]string // account → the quota day the rebuild added to
	rebuiltAny  bool              // some part added anything: not a fresh start
}

// guardKey is a repeat guard: a message to a recipient.
type guardKey struct{ guard, recipient string }

// guardClaim is the host that holds a repeat guard, by which admission,
// until when.
type guardClaim struct {
	host, claim string
	expires     time.Time
}

type storedBucket struct {
	limit  ratelimit.Limit // the limit it was last settled with
	bucket ratelimit.Bucket
}

type dayKey struct{ account, day string }

type claimRecord struct {
	account, day string
	recipient    string
	guard        string
	refunded     bool
	expires      time.Time
}

// memo is what the gate remembers of one recipient: the latest admission
// to them and the one before (for a refund to go back to), forgotten at
// keep as Redis expires the key (only memory: every rule compares times).
type memo struct {
	at                     time.Time
	account, claim         string
	prevAt                 time.Time
	prevAccount, prevClaim string
	keep                   time.Time
}

// memoKeep is how long a recipient is remembered after an admission: as
// long as the window, the pair gap and the stickiness need.
func memoKeep(r Request) time.Duration {
	return max(ratelimit.ReachWindow, r.PairGap, r.Sticky)
}

// NewReference returns a reference gate reading time from now. Like a fresh
// Redis it holds no state: a forced quota reset starts it.
func NewReference(now func() time.Time) *Reference {
	r := &Reference{now: now}
	r.clear()
	return r
}

func (g *Reference) clear() {
	g.gen, g.global = "", nil
	g.buckets = map[string]storedBucket{}
	g.day = map[string]string{}
	g.used = map[dayKey]int{}
	g.claims = map[string]claimRecord{}
	g.memos = map[string]memo{}
	g.guards = map[guardKey]guardClaim{}
	g.rebuilt, g.contributed, g.rebuiltDay, g.rebuiltAny = "", map[string]bool{}, map[string]string{}, false
}

// window is the portfolio's moving window at now: distinct recipients in
// it and the oldest of their latest admissions. It forgets recipients kept
// long enough.
func (g *Reference) window(now time.Time) ReachState {
	var w ReachState
	for to, m := range g.memos {
		if !now.Before(m.keep) {
			delete(g.memos, to)
			continue
		}
		if ratelimit.InWindow(now, m.at) {
			w.Used++
			if w.Oldest.IsZero() || m.at.Before(w.Oldest) {
				w.Oldest = m.at
			}
		}
	}
	return w
}

// memo is what the gate remembers of a recipient at now; zero when nothing.
func (g *Reference) memo(to string, now time.Time) memo {
	m, ok := g.memos[to]
	if !ok || !now.Before(m.keep) {
		return memo{}
	}
	return m
}

// LoseState forgets everything, as a Redis restarted without persistence
// does.
func (g *Reference) LoseState() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clear()
}

// settled is the bucket at t under l: tokens earned under the limit it was
// last settled with are kept (ratelimit.Bucket.Relimit); one never seen is
// full.
func settled(s *storedBucket, l ratelimit.Limit, t time.Time) ratelimit.Bucket {
	if s == nil {
		return ratelimit.Full(l, t)
	}
	return s.bucket.Relimit(s.limit, l, t)
}

func (g *Reference) Admit(ctx context.Context, r Request) (Admission, error) {
	if err := r.Validate(); err != nil {
		return Admission{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if g.gen == "" {
		return Admission{}, fmt.Errorf("admit %s: %w", r.ClaimID, ErrStateLost)
	}
	if r.Host != "" && g.rebuilt == g.gen && !g.contributed[r.Host] {
		return Admission{}, fmt.Errorf("admit %s: %w", r.ClaimID, ErrRebuild)
	}
	if c, ok := g.claims[r.ClaimID]; ok && now.Before(c.expires) {
		a := Admission{OK: true, Replayed: true, At: now, Index: -1, Claim: Claim{ID: r.ClaimID, Account: c.account, Day: c.day}}
		for i, acct := range r.Accounts {
			if acct.Name == c.account {
				a.Index = i
			}
		}
		return a, nil
	}
	for _, a := range r.Accounts {
		if g.day[a.Name] == "" {
			g.day[a.Name] = DayID(r.Today, 1)
		}
	}
	gk := guardKey{r.Guard, r.Recipient}
	snap := Snapshot{Accounts: make([]Balance, len(r.Accounts))}
	if gc, ok := g.guards[gk]; ok && r.Guard != "" {
		snap.Hold = GuardHold{Host: gc.host, Until: gc.expires}
	}
	var m memo
	if r.Recipient != "" {
		m = g.memo(r.Recipient, now)
	}
	snap.Last = Contact{At: m.at, Account: m.account}
	snap.Sender = snap.Last
	window := -1
	if r.Reach.Limited() {
		w := g.window(now)
		snap.Windows, window = []Window{{Reach: r.Reach, Used: w.Used, Oldest: w.Oldest, Last: m.at}}, 0
	}
	for i, a := range r.Accounts {
		var s *storedBucket
		if b, ok := g.buckets[a.Name]; ok {
			s = &b
		}
		snap.Accounts[i] = Balance{Bucket: settled(s, a.Limit, now), Used: g.used[dayKey{a.Name, g.day[a.Name]}], Window: window}
	}
	if r.Global != nil {
		snap.GlobalLimit = *r.Global
		b := settled(g.global, snap.GlobalLimit, now)
		snap.Global = &b
	}
	d := Decide(snap, r, now)
	if !d.OK {
		ad := Admission{At: now, Reason: d.Reason, Until: d.Until}
		// The refusal is the recipient's own number's alone.
		if d.Offered && (d.Reason == ratelimit.ReasonTokens || d.Reason == ratelimit.ReasonCapped) {
			ad.StickyAccount = d.Sticky
		}
		return ad, nil
	}
	a := r.Accounts[d.Index]
	if d.Global != nil {
		g.global = &storedBucket{limit: snap.GlobalLimit, bucket: *d.Global}
	}
	g.buckets[a.Name] = storedBucket{limit: a.Limit, bucket: d.Bucket}
	day := g.day[a.Name]
	g.used[dayKey{a.Name, day}]++
	g.claims[r.ClaimID] = claimRecord{account: a.Name, day: day, recipient: r.Recipient, guard: r.Guard, expires: now.Add(ClaimTTL)}
	if r.Guard != "" {
		g.guards[gk] = guardClaim{host: r.Host, claim: r.ClaimID, expires: now.Add(GuardWindow)}
	}
	if r.Recipient != "" {
		g.memos[r.Recipient] = memo{
			at: now, account: a.Name, claim: r.ClaimID,
			prevAt: m.at, prevAccount: m.account, prevClaim: m.claim,
			keep: later(m.keep, now.Add(memoKeep(r))),
		}
	}
	return Admission{
		OK: true, Index: d.Index, At: now,
		Claim:         Claim{ID: r.ClaimID, Account: a.Name, Day: day},
		Used:          g.used[dayKey{a.Name, day}],
		Tokens:        d.Bucket.Tokens,
		StickyAccount: d.Sticky,
		StickyBroken:  d.Sticky != "" && !d.Offered,
	}, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (g *Reference) Refund(ctx context.Context, c Claim) (RefundResult, error) {
	if err := c.Validate(); err != nil {
		return 0, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	rec, ok := g.claims[c.ID]
	if !ok || !g.now().Before(rec.expires) {
		return UnknownClaim, nil
	}
	if !c.ByID() && (rec.account != c.Account || rec.day != c.Day) {
		return 0, fmt.Errorf("refund %s: admitted for %s on %s, not %s on %s", c.ID, rec.account, rec.day, c.Account, c.Day)
	}
	if rec.refunded {
		return AlreadyRefunded, nil
	}
	if k := (dayKey{rec.account, rec.day}); g.used[k] > 0 {
		g.used[k]--
	}
	rec.refunded = true
	g.claims[c.ID] = rec
	// The repeat guard is let go when this admission holds it: the message
	// was not accepted, so nobody got it.
	if gk := (guardKey{rec.guard, rec.recipient}); rec.guard != "" && g.guards[gk].claim == c.ID {
		delete(g.guards, gk)
	}
	// The recipient's memory goes back to the admission before, unless a
	// later one replaced this.
	if m, ok := g.memos[rec.recipient]; ok && rec.recipient != "" && m.claim == c.ID {
		if m.prevAt.IsZero() {
			delete(g.memos, rec.recipient)
		} else {
			g.memos[rec.recipient] = memo{at: m.prevAt, account: m.prevAccount, claim: m.prevClaim, keep: m.keep}
		}
	}
	return Refunded, nil
}

func (g *Reference) ResetQuota(ctx context.Context, r ResetRequest) ([]Reset, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gen == "" {
		if !r.Force {
			return nil, fmt.Errorf("quota reset: %w", ErrStateLost)
		}
		g.gen = NewGeneration()
	}
	out := make([]Reset, 0, len(r.Accounts))
	for _, name := range r.Accounts {
		cur := g.day[name]
		next, changed, err := NextDay(cur, r.Today, r.Force)
		if err != nil {
			return nil, fmt.Errorf("quota reset of %s: %w", name, err)
		}
		g.day[name] = next
		out = append(out, Reset{Account: name, Day: next, LastDay: cur, Before: g.used[dayKey{name, cur}], Reset: changed, Behind: behind(cur, r.Today)})
	}
	return out, nil
}

func (g *Reference) Rebuild(ctx context.Context, r RebuildRequest) (RebuildResult, error) {
	if err := r.Validate(); err != nil {
		return RebuildResult{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	var res RebuildResult
	switch {
	case g.gen == "":
		g.clear()
		g.gen = NewGeneration()
		g.rebuilt = g.gen
		res.Started = true
	case g.rebuilt != g.gen:
		return res, fmt.Errorf("rebuild: %w", ErrNotLost)
	}
	if g.contributed[r.Host] {
		res.Already, res.OnRebuiltDay = true, map[string]bool{}
		for _, a := range r.Accounts {
			d, ok := g.rebuiltDay[a.Account]
			res.OnRebuiltDay[a.Account] = ok && g.day[a.Account] == d && g.rebuiltAny
		}
		return res, nil
	}
	g.contributed[r.Host] = true
	// The caller's instants onto this clock, in whole microseconds as
	// Redis counts them.
	shift := now.UnixMicro() - r.Now.UnixMicro()
	onGate := func(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro() + shift) }
	res.Added, res.Days = map[string]int{}, map[string]string{}
	for _, a := range r.Accounts {
		if g.day[a.Account] == "" {
			g.day[a.Account] = DayID(r.Today, 1)
		}
		day := g.day[a.Account]
		res.Days[a.Account] = day
		if _, ok := g.rebuiltDay[a.Account]; !ok {
			g.rebuiltDay[a.Account] = day
		}
		if cal, _, _ := ParseDayID(day); cal == a.Day && a.Used > 0 {
			g.used[dayKey{a.Account, day}] += a.Used
			res.Added[a.Account] += a.Used
			g.rebuiltAny = true
		}
	}
	for _, c := range r.Window {
		at := onGate(c.At)
		if !ratelimit.InWindow(now, at) {
			continue
		}
		if m := g.memo(c.Recipient, now); !m.at.IsZero() && !at.After(m.at) {
			continue
		}
		g.memos[c.Recipient] = memo{at: at, account: c.Account, keep: at.Add(ratelimit.ReachWindow)}
		g.rebuiltAny = true
	}
	for _, h := range r.Guards {
		end := onGate(h.At).Add(GuardWindow)
		k := guardKey{h.Guard, h.Recipient}
		if gc, ok := g.guards[k]; (ok && now.Before(gc.expires)) || !now.Before(end) {
			continue
		}
		g.guards[k] = guardClaim{host: r.Host, expires: end}
		g.rebuiltAny = true
	}
	return res, nil
}

func (g *Reference) State(ctx context.Context, accounts []Account, global *ratelimit.Limit) (State, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	st := State{Generation: g.gen, At: now}
	for _, a := range accounts {
		var s *storedBucket
		if b, ok := g.buckets[a.Name]; ok {
			s = &b
		}
		day := g.day[a.Name]
		st.Accounts = append(st.Accounts, AccountState{
			Name: a.Name, Day: day, Used: g.used[dayKey{a.Name, day}],
			Tokens: settled(s, a.Limit, now).Tokens,
		})
	}
	if global != nil {
		st.Global = &BucketState{Tokens: settled(g.global, *global, now).Tokens}
	}
	st.Reach = g.window(now)
	return st, nil
}

// NextDay is the quota day a reset on today leaves an account on, whose
// current day is cur (empty: none yet), and whether that is a new day. As
// with the SQLite store, quota days only move forward: a today earlier than
// cur's calendar day (a host whose clock or zone is behind) starts nothing,
// and a forced reset then starts a new quota day on cur's calendar day.
func NextDay(cur, today string, force bool) (string, bool, error) {
	if cur == "" {
		return DayID(today, 1), true, nil
	}
	cal, epoch, err := ParseDayID(cur)
	if err != nil {
		return "", false, err
	}
	switch {
	case today > cal: // ISO dates order as strings
		return DayID(today, epoch+1), true, nil
	case force:
		return DayID(cal, epoch+1), true, nil
	}
	return cur, false, nil
}

// NewGeneration returns a fresh generation: the name of one lifetime of the
// shared state, written when a forced reset starts it.
func NewGeneration() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// behind reports whether today is earlier than the calendar day of the
// quota day cur.
func behind(cur, today string) bool {
	cal, _, err := ParseDayID(cur)
	return err == nil && today < cal
}
