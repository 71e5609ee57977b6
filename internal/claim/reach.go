package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// reachGate is one portfolio's messaging limit inside a claim: who belongs
// to it (every account that counts, removed and disabled ones too), and how
// much of the window is used.
type reachGate struct {
	reach   ratelimit.Reach
	scope   driver.ReachScope // whose sends count: every account that counts
	counted bool
	since   time.Time // sends after it are in the window
	used    int
	oldest  time.Time // the oldest latest send in the window, once blocked
	blocked bool      // refused a new recipient in this claim
}

// gateFor builds the gate of a's portfolio.
func gateFor(ctx context.Context, tx driver.ClaimTx, a driver.ClaimAccount) (*reachGate, error) {
	limit, err := tx.ReachLimit(ctx, a)
	if err != nil {
		return nil, err
	}
	g := &reachGate{reach: ratelimit.Reach{Limit: limit, Margin: a.Margin}}
	members := []int64{a.ID}
	if a.PortfolioID != 0 {
		if members, err = tx.Members(ctx, a.PortfolioID); err != nil {
			return nil, err
		}
	}
	g.scope = driver.ScopeOf(a.ID, a.PortfolioID, members)
	return g, nil
}

// reachGates returns the gate of each account (accounts of one portfolio
// share theirs).
func reachGates(ctx context.Context, tx driver.ClaimTx, accts []driver.ClaimAccount) ([]*reachGate, error) {
	out := make([]*reachGate, len(accts))
	shared := map[int64]*reachGate{}
	for i, a := range accts {
		if g, ok := shared[a.PortfolioID]; ok && a.PortfolioID != 0 {
			out[i] = g
			continue
		}
		g, err := gateFor(ctx, tx, a)
		if err != nil {
			return nil, err
		}
		out[i], shared[a.PortfolioID] = g, g
	}
	return out, nil
}

// count reads how many distinct recipients the portfolio's numbers
// messaged in the window ending at now, once per claim: its running count,
// moved to now.
func (g *reachGate) count(ctx context.Context, tx driver.ClaimTx, now time.Time) error {
	if g.counted || len(g.scope.Members) == 0 {
		return nil
	}
	g.since = now.Add(-ratelimit.ReachWindow)
	n, err := tx.ReachCount(ctx, g.scope, g.since)
	if err != nil {
		return err
	}
	g.used, g.counted = n, true
	return nil
}

// keepCounts moves every portfolio's running count to now, limited or
// not: status reads the counts a claim keeps, and a count left behind
// would cost its next reader the sends since. A limited one is read too.
func keepCounts(ctx context.Context, tx driver.ClaimTx, gates []*reachGate, now time.Time) error {
	for _, g := range gates {
		if g.reach.Limited() {
			if err := g.count(ctx, tx, now); err != nil {
				return err
			}
			continue
		}
		// Nothing in the claim reads an unlimited portfolio's count: it is
		// only moved on.
		if err := tx.KeepReach(ctx, g.scope, now.Add(-ratelimit.ReachWindow)); err != nil {
			return err
		}
	}
	return nil
}

// findOldest reads the oldest of the latest sends to the recipients in the
// window: when it leaves, there is room again.
func (g *reachGate) findOldest(ctx context.Context, tx driver.ClaimTx) error {
	var err error
	g.oldest, err = tx.ReachOldest(ctx, g.scope.Members, g.since)
	return err
}

// windowFor is the portfolio's window as a recipient last contacted as c
// meets it at now: counted once per claim, its oldest recipient read when
// it is full.
func (g *reachGate) windowFor(ctx context.Context, tx driver.ClaimTx, c driver.LastContact, now time.Time) (limits.Window, error) {
	w := limits.Window{Reach: g.reach}
	if !g.reach.Limited() {
		return w, nil
	}
	if err := g.count(ctx, tx, now); err != nil {
		return w, err
	}
	for _, id := range g.scope.Members {
		if at := c.ByAccount[id]; at.After(w.Last) {
			w.Last = at
		}
	}
	w.Used = g.used
	if !g.blocked && g.used >= g.reach.Allowed() && !ratelimit.InWindow(now, w.Last) {
		// It refuses the recipient: the wait runs to its oldest one's
		// leaving. Sends of this claim are not logged yet, so an empty
		// window (a limit the margin leaves nothing of) makes room now at
		// the earliest.
		if err := g.findOldest(ctx, tx); err != nil {
			return w, err
		}
		if g.oldest.IsZero() {
			g.oldest = now
		}
	}
	w.Oldest = g.oldest
	return w, nil
}

// reachFreesAt is the earliest instant a portfolio that refused a
// recipient in this claim has room again; zero when none refused.
func reachFreesAt(gates []*reachGate) time.Time {
	var at time.Time
	for _, g := range gates {
		if g.blocked {
			if f := ratelimit.FreesAt(g.oldest); at.IsZero() || f.Before(at) {
				at = f
			}
		}
	}
	return at
}

// maxHeldScan bounds the rows one claim reads while every row it reads is
// held: past it the claim ends (committing what it held) and the next one
// goes on at once.
const maxHeldScan = 1024

// capLookAgain is how long a row whose sticky number is at its cap waits
// before a claim looks at it again.
const capLookAgain = time.Minute

// reachOnly returns the gates that keep a row from every account when only
// the portfolios' reach does: each account is either closed to the
// recipient by its portfolio's full window (open false) or at its daily
// cap (window: each account's gate). nil when an open account may take the
// row once it has a token, or when no gate is closed.
func reachOnly(cands []ratelimit.Candidate, open []bool, window []int, gates []*reachGate) []*reachGate {
	var closed []*reachGate
	for i, c := range cands {
		if open[i] {
			if c.Used < c.DailyCap {
				return nil
			}
			continue
		}
		closed = append(closed, gates[window[i]])
	}
	return closed
}

// reachHolds are the rows a claim puts off for the portfolios' reach, each
// with the gates that refused it. They are written once the claim's own
// sends are logged: those may renew the window's oldest recipient, and so
// move the instant room opens.
type reachHolds struct {
	rows  []int64
	gates [][]*reachGate
}

func (h *reachHolds) add(id int64, gates []*reachGate) {
	h.rows, h.gates = append(h.rows, id), append(h.gates, gates)
}

// write puts each row off until the first of its gates makes room, after
// reading the gates' oldest recipients again when refresh is set, forgets
// them, and returns the earliest such instant (zero without rows).
func (h *reachHolds) write(ctx context.Context, tx driver.ClaimTx, refresh bool) (time.Time, error) {
	if refresh {
		done := map[*reachGate]bool{}
		for _, gs := range h.gates {
			for _, g := range gs {
				if done[g] {
					continue
				}
				done[g] = true
				if err := g.findOldest(ctx, tx); err != nil {
					return time.Time{}, err
				}
			}
		}
	}
	var first time.Time
	for i, id := range h.rows {
		var until time.Time
		for _, g := range h.gates[i] {
			if f := ratelimit.FreesAt(g.oldest); until.IsZero() || f.Before(until) {
				until = f
			}
		}
		if err := tx.PutOff(ctx, id, until, driver.PutOffReach); err != nil {
			return time.Time{}, err
		}
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	h.rows, h.gates = h.rows[:0], h.gates[:0]
	return first, nil
}
