package claim

import (
	"context"
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// localGate is the limits gate of a claim with this database's limits: the
// batch's state (the accounts' buckets, caps and health, the global bucket,
// each portfolio's window, the recipients' last contacts) read once in the
// claim's transaction, every message decided in memory by limits.Decide,
// and what the claim spent written once at its end (write).
type localGate struct {
	accts []driver.ClaimAccount
	// cands are the accounts' buckets and counts as this claim spends them
	// (a high-priority campaign's loan included, repaid by write).
	cands   []ratelimit.Candidate
	lent    []float64
	turn    turn
	touched []bool
	global  *ratelimit.Bucket
	gLimit  ratelimit.Limit
	// gates are the portfolios' windows (accounts of one portfolio share
	// theirs), window each account's index among them.
	gates  []*reachGate
	window []int
	req    limits.Request
	// contacts are the send log's rows of the batch's recipients; seen the
	// recipients this claim admitted (the pair gap counts from now).
	contacts map[string]driver.LastContact
	seen     map[string]bool
	// last is the latest pick among every account (a row not bound to its
	// sticky number): what the claim waits for when it admits nothing.
	last       ratelimit.Decision
	picked     bool
	campaignID int64
	balances   []limits.Balance
	windows    []limits.Window
}

// openLocalGate reads the state a claim of campaignID decides on.
func openLocalGate(ctx context.Context, tx driver.ClaimTx, campaignID int64, accts []driver.ClaimAccount, global driver.GlobalBucket,
	t turn, now time.Time) (*localGate, error) {
	g := &localGate{campaignID: campaignID, accts: accts, turn: t, touched: make([]bool, len(accts))}
	g.cands = make([]ratelimit.Candidate, len(accts))
	for i, a := range accts {
		g.cands[i] = ratelimit.Candidate{
			Limit:     a.Limit(now),
			Bucket:    a.Bucket(),
			Used:      a.UsedToday,
			DailyCap:  a.Limits.DailyCap,
			NotBefore: a.Health.CooldownUntil,
			Demoted:   a.Health.Demoted(now),
		}
	}
	g.gLimit = global.Limit
	if global.On {
		b := global.Bucket
		g.global = &b
	}
	gates, err := reachGates(ctx, tx, accts)
	if err != nil {
		return nil, err
	}
	g.window = make([]int, len(accts))
	index := map[*reachGate]int{}
	for i, rg := range gates {
		w, ok := index[rg]
		if !ok {
			w = len(g.gates)
			index[rg] = w
			g.gates = append(g.gates, rg)
		}
		g.window[i] = w
	}
	if err := keepCounts(ctx, tx, g.gates, now); err != nil {
		return nil, err
	}
	gap, err := tx.PairGap(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	g.lent = t.lend(g.cands, now)
	g.req = limits.Request{PairGap: gap, Sticky: campaign.StickyFor, Accounts: make([]limits.Account, len(accts))}
	for i, c := range g.cands {
		g.req.Accounts[i] = limits.Account{Name: accountKey(accts[i].ID), Limit: c.Limit, DailyCap: c.DailyCap, Demoted: c.Demoted}
	}
	return g, nil
}

// accountKey names an account (by its id) in the decider's snapshot, so the
// sticky sender may be one the claim does not offer.
func accountKey(id int64) string { return strconv.FormatInt(id, 10) }

// read looks the batch's recipients up in the send log.
func (g *localGate) read(ctx context.Context, tx driver.ClaimTx, msgs []campaign.Message) error {
	phones := make([]string, len(msgs))
	for i, m := range msgs {
		phones[i] = m.Phone
	}
	if g.seen == nil {
		g.seen = make(map[string]bool, len(msgs)) // sized once: most rows are admitted
	}
	var err error
	g.contacts, err = tx.LastContacts(ctx, phones)
	return err
}

// admit asks limits.Decide about m at now and books an admission. Windows
// that refuse the recipient stay closed to new recipients for the rest of
// the claim.
func (g *localGate) admit(ctx context.Context, tx driver.ClaimTx, m campaign.Message, only accountMask, now time.Time) (answer, error) {
	if only.none() {
		return answer{own: true}, nil // none of its numbers is offered in this claim: a while
	}
	c := g.contacts[m.Phone]
	if g.balances == nil {
		g.balances, g.windows = make([]limits.Balance, len(g.accts)), make([]limits.Window, len(g.gates))
	}
	// Decide keeps nothing of the snapshot: one pair of slices serves
	// every row.
	s := limits.Snapshot{Last: limits.Contact{At: c.At}, Global: g.global, GlobalLimit: g.gLimit,
		Accounts: g.balances, Windows: g.windows}
	if g.seen[m.Phone] {
		s.Last.At = now
	}
	var broken string
	if !c.SentAt.IsZero() {
		s.Sender = limits.Contact{At: c.SentAt, Account: accountKey(c.Account)}
		for _, a := range g.accts {
			if a.ID == c.Account && a.Restriction != "" && a.CooldownUntil.After(now) && c.SentAt.After(now.Add(-campaign.StickyFor)) {
				// Their number is restricted: any other may send.
				s.Sender, broken = limits.Contact{}, campaign.StickyRestricted
			}
		}
	}
	for w, rg := range g.gates {
		win, err := rg.windowFor(ctx, tx, c, now)
		if err != nil {
			return answer{}, err
		}
		s.Windows[w] = win
	}
	for i, cd := range g.cands {
		s.Accounts[i] = limits.Balance{Bucket: cd.Bucket, Used: cd.Used, NotBefore: cd.NotBefore, Window: g.window[i]}
	}
	r := g.req
	r.Recipient = m.Phone
	var index []int // with only: each offered account's index in g.accts
	if only != nil {
		s, r, index = only.offer(s, r)
	}
	d := limits.Decide(s, r, now)
	if d.Reason == limits.ReasonPair {
		return answer{reason: d.Reason, until: d.Until}, nil
	}
	for _, w := range d.Refused {
		g.gates[w].blocked = true
	}
	if index != nil {
		if !d.OK {
			// Only its numbers may send it: the row waits for them, the
			// next rows may go from the others.
			return answer{own: true, reason: d.Reason, until: d.Until}, nil
		}
		if d.Index = index[d.Index]; d.Sticky != "" && !d.Offered && g.offers(d.Sticky) {
			d.Sticky = "" // left out for the window, not broken
		}
	}
	var open []bool
	if !d.OK {
		// Whether each account's portfolio lets the recipient in: what a
		// refusal holds the row for.
		open = make([]bool, len(g.accts))
		for i := range open {
			w := g.window[i]
			open[i] = !g.gates[w].blocked || ratelimit.InWindow(now, s.Windows[w].Last)
		}
	}
	if d.Offered && !d.OK {
		only := -1
		for i, a := range g.accts {
			if accountKey(a.ID) == d.Sticky {
				only = i
			}
		}
		a := answer{own: true, reason: d.Reason, until: d.Until}
		switch {
		case !open[only]:
			a.holdReach = []*reachGate{g.gates[g.window[only]]}
		case g.cands[only].Used >= g.cands[only].DailyCap:
			a.holdCap = true
		}
		return a, nil
	}
	if !d.Offered {
		g.last, g.picked = d.Pick, true
		if d.Reason == limits.ReasonReach {
			// Every account's portfolio refused: as a pick among none.
			g.last = ratelimit.Decision{Index: -1, Reason: ratelimit.ReasonEmpty}
		}
	}
	if !d.OK {
		hold := reachOnly(g.cands, open, g.window, g.gates)
		if hold != nil {
			// Refused for the reach while no number has a token either:
			// nothing goes before the token. When the window makes room
			// by then, a hold would be undone before it helped (every
			// row of the campaign held, then due again, at each token):
			// the batch ends at the token wait. A window that makes room
			// later holds the row, as the claim at the token would.
			if p := ratelimit.Pick(now, g.cands, g.global, g.gLimit); p.Index < 0 && !p.Until.IsZero() && !reachFreesAt(hold).After(p.Until) {
				g.last = p
				return answer{reason: p.Reason, until: p.Until, stop: true}, nil
			}
		}
		return answer{reason: d.Reason, until: d.Until, stop: reachFreesAt(g.gates).IsZero(), holdReach: hold}, nil
	}
	if broken == "" && d.Sticky != "" && !d.Offered {
		var err error
		if broken, err = stickyBreak(ctx, tx, g.campaignID, c.Account, ""); err != nil {
			return answer{}, err
		}
	}
	i := d.Index
	g.cands[i].Bucket, g.cands[i].Used, g.touched[i] = d.Bucket, g.cands[i].Used+1, true
	if d.Global != nil {
		*g.global = *d.Global
	}
	if d.New {
		g.gates[g.window[i]].used++
	}
	g.seen[m.Phone] = true
	return answer{ok: true, account: i, broken: broken}, nil
}

// offers reports whether the claim offers the account the decider names.
func (g *localGate) offers(name string) bool {
	for _, a := range g.accts {
		if accountKey(a.ID) == name {
			return true
		}
	}
	return false
}

// offer is the request and snapshot of the accounts m lets send, and the
// index of each among all.
func (m accountMask) offer(s limits.Snapshot, r limits.Request) (limits.Snapshot, limits.Request, []int) {
	var (
		index []int
		accts []limits.Account
		bals  []limits.Balance
	)
	for i, ok := range m {
		if ok {
			index, accts, bals = append(index, i), append(accts, r.Accounts[i]), append(bals, s.Accounts[i])
		}
	}
	s.Accounts, r.Accounts = bals, accts
	return s, r, index
}

// finish returns the wait of a claim that admitted nothing.
func (g *localGate) finish(ctx context.Context, tx driver.ClaimTx, n int, w waits) error {
	if n > 0 {
		return nil
	}
	return w.wait(ctx, tx, g.campaignID, refusal{refused: g.picked, reason: g.last.Reason, until: g.last.Until, freed: reachFreesAt(g.gates)})
}

// write stores what the claim spent: the buckets (the loan repaid) and
// counts of the accounts it took from, and the global bucket.
func (g *localGate) write(ctx context.Context, tx driver.ClaimTx) error {
	g.turn.repay(g.cands, g.lent)
	for i, a := range g.accts {
		if !g.touched[i] {
			continue
		}
		if err := tx.SpendTokens(ctx, a.ID, g.cands[i].Bucket, g.cands[i].Used); err != nil {
			return err
		}
	}
	if g.global != nil {
		return tx.SpendGlobal(ctx, *g.global)
	}
	return nil
}
