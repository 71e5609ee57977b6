package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// localGate is the limits gate of a claim with this database's limits: the
// batch's state (the accounts' buckets, caps and health, the global bucket,
// each portfolio's window, the recipients' last contacts) read once in the
// claim's transaction, every message decided in memory by limits.Decide,
// and what the claim spent written once at its end (write).
type localGate struct {
	accts []account
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
	gap    time.Duration
	// contacts are the send log's rows of the batch's recipients; seen the
	// recipients this claim admitted (the pair gap counts from now).
	contacts map[string]lastContact
	seen     map[string]bool
}

// openLocalGate reads the state a claim of campaignID decides on.
func openLocalGate(ctx context.Context, tx *Tx, campaignID int64, accts []account, t turn, now time.Time) (*localGate, error) {
	g := &localGate{accts: accts, turn: t, touched: make([]bool, len(accts)), seen: map[string]bool{}}
	g.cands = make([]ratelimit.Candidate, len(accts))
	for i, a := range accts {
		g.cands[i] = ratelimit.Candidate{
			Limit:     a.limit(now),
			Bucket:    a.bucket(),
			Used:      a.UsedToday,
			DailyCap:  a.Limits.DailyCap,
			NotBefore: a.health.CooldownUntil,
			Demoted:   a.health.Demoted(now),
		}
	}
	var (
		on bool
		b  ratelimit.Bucket
		at int64
	)
	if err := tx.QueryRowContext(ctx, `SELECT enabled, rate, burst, tokens, tokens_at FROM global_limit WHERE id = 1`).
		Scan(&on, &g.gLimit.Rate, &g.gLimit.Burst, &b.Tokens, &at); err != nil {
		return nil, fmt.Errorf("read global limit: %w", err)
	}
	if on {
		b.At = fromNanos(at)
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
	if g.gap, err = pairGap(ctx, tx, campaignID); err != nil {
		return nil, err
	}
	g.lent = t.lend(g.cands, now)
	g.req = limits.Request{PairGap: g.gap, Sticky: campaign.StickyFor, Accounts: make([]limits.Account, len(accts))}
	for i, c := range g.cands {
		g.req.Accounts[i] = limits.Account{Name: accountKey(accts[i].ID), Limit: c.Limit, DailyCap: c.DailyCap, Demoted: c.Demoted}
	}
	return g, nil
}

// accountKey names an account (by its id) in the decider's snapshot, so the
// sticky sender may be one the claim does not offer.
func accountKey(id int64) string { return strconv.FormatInt(id, 10) }

// read looks the batch's recipients up in the send log.
func (g *localGate) read(ctx context.Context, tx *Tx, msgs []campaign.Message) error {
	var err error
	g.contacts, err = readLastContacts(ctx, tx, msgs)
	return err
}

// localDecision is the gate's answer for one message: Decide's, and why the
// recipient's sticky number could not send (empty when it could, or there
// is none) for the campaign's tally.
type localDecision struct {
	limits.Decision
	broken string
	// open: whether each account's portfolio lets the recipient in.
	open []bool
}

// decide asks limits.Decide about m at now. Windows that refuse the
// recipient stay closed to new recipients for the rest of the claim.
func (g *localGate) decide(ctx context.Context, tx *Tx, campaignID int64, m campaign.Message, now time.Time) (localDecision, error) {
	c := g.contacts[m.Phone]
	s := limits.Snapshot{Last: limits.Contact{At: c.at}, Global: g.global, GlobalLimit: g.gLimit,
		Accounts: make([]limits.Balance, len(g.accts)), Windows: make([]limits.Window, len(g.gates))}
	if g.seen[m.Phone] {
		s.Last.At = now
	}
	var ld localDecision
	if !c.sentAt.IsZero() {
		s.Sender = limits.Contact{At: c.sentAt, Account: accountKey(c.account)}
		for _, a := range g.accts {
			if a.ID == c.account && a.Restriction != "" && a.CooldownUntil.After(now) && c.sentAt.After(now.Add(-campaign.StickyFor)) {
				// Their number is restricted: any other may send.
				s.Sender, ld.broken = limits.Contact{}, campaign.StickyRestricted
			}
		}
	}
	for w, rg := range g.gates {
		win, err := rg.windowFor(ctx, tx, c, now)
		if err != nil {
			return ld, err
		}
		s.Windows[w] = win
	}
	for i, cd := range g.cands {
		s.Accounts[i] = limits.Balance{Bucket: cd.Bucket, Used: cd.Used, NotBefore: cd.NotBefore, Window: g.window[i]}
	}
	r := g.req
	r.Recipient = m.Phone
	ld.Decision = limits.Decide(s, r, now)
	for _, w := range ld.Refused {
		g.gates[w].blocked = true
	}
	ld.open = make([]bool, len(g.accts))
	for i := range ld.open {
		ld.open[i] = !g.gates[g.window[i]].blocked || ratelimit.InWindow(now, s.Windows[g.window[i]].Last)
	}
	if ld.OK && ld.broken == "" && ld.Sticky != "" && !ld.Offered {
		var err error
		if ld.broken, err = stickyBreakLocal(ctx, tx, campaignID, c.account); err != nil {
			return ld, err
		}
	}
	return ld, nil
}

// take books an admission: the account's token and count, the global
// bucket's token, the recipient new to the window.
func (g *localGate) take(d localDecision, phone string) {
	i := d.Index
	g.cands[i].Bucket, g.cands[i].Used, g.touched[i] = d.Bucket, g.cands[i].Used+1, true
	if d.Global != nil {
		*g.global = *d.Global
	}
	if d.New {
		g.gates[g.window[i]].used++
	}
	g.seen[phone] = true
}

// write stores what the claim spent: the buckets (the loan repaid) and
// counts of the accounts it took from, and the global bucket.
func (g *localGate) write(ctx context.Context, tx *Tx) error {
	g.turn.repay(g.cands, g.lent)
	for i, a := range g.accts {
		if !g.touched[i] {
			continue
		}
		b := g.cands[i].Bucket
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET tokens = ?, tokens_at = ?, used_today = ? WHERE id = ?`,
			b.Tokens, nanos(b.At), g.cands[i].Used, a.ID); err != nil {
			return fmt.Errorf("spend tokens of %s: %w", a.Name, err)
		}
	}
	if g.global != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE global_limit SET tokens = ?, tokens_at = ? WHERE id = 1`,
			g.global.Tokens, nanos(g.global.At)); err != nil {
			return fmt.Errorf("spend global tokens: %w", err)
		}
	}
	return nil
}

// windowFor is the portfolio's window as a recipient last contacted as c
// meets it at now: counted once per claim, its oldest recipient read when
// it is full.
func (g *reachGate) windowFor(ctx context.Context, q querier, c lastContact, now time.Time) (limits.Window, error) {
	w := limits.Window{Reach: g.reach}
	if !g.reach.Limited() {
		return w, nil
	}
	if err := g.count(ctx, q, now); err != nil {
		return w, err
	}
	for _, id := range g.members {
		if at := c.byAccount[id.(int64)]; at.After(w.Last) {
			w.Last = at
		}
	}
	w.Used = g.used
	if !g.blocked && g.used >= g.reach.Allowed() && !ratelimit.InWindow(now, w.Last) {
		// It refuses the recipient: the wait runs to its oldest one's
		// leaving. Sends of this claim are not logged yet, so an empty
		// window (a limit the margin leaves nothing of) makes room now at
		// the earliest.
		if err := g.findOldest(ctx, q); err != nil {
			return w, err
		}
		if g.oldest.IsZero() {
			g.oldest = now
		}
	}
	w.Oldest = g.oldest
	return w, nil
}

// stickyBreakLocal says why the account that last sent to a recipient is
// not among the claim's usable ones.
func stickyBreakLocal(ctx context.Context, tx *Tx, campaignID, accountID int64) (string, error) {
	var disabled, removed, dropped bool
	err := tx.QueryRowContext(ctx, `SELECT disabled, removed_at IS NOT NULL,
		EXISTS (SELECT 1 FROM campaign_accounts WHERE campaign_id = ? AND account_id = accounts.id)
		FROM accounts WHERE id = ?`, campaignID, accountID).Scan(&disabled, &removed, &dropped)
	switch {
	case errors.Is(err, sql.ErrNoRows), err == nil && removed:
		return campaign.StickyRemoved, nil
	case err != nil:
		return "", fmt.Errorf("read account %d: %w", accountID, err)
	case disabled:
		return campaign.StickyDisabled, nil
	case dropped:
		return campaign.StickyDropped, nil
	}
	return campaign.StickyDisabled, nil
}
