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
	// last is the latest pick among every account (a row not bound to its
	// sticky number): what the claim waits for when it admits nothing.
	last       ratelimit.Decision
	picked     bool
	campaignID int64
	balances   []limits.Balance
	windows    []limits.Window
}

// openLocalGate reads the state a claim of campaignID decides on.
func openLocalGate(ctx context.Context, tx *Tx, campaignID int64, accts []account, t turn, now time.Time) (*localGate, error) {
	g := &localGate{campaignID: campaignID, accts: accts, turn: t, touched: make([]bool, len(accts)), seen: map[string]bool{}}
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

// admit asks limits.Decide about m at now and books an admission. Windows
// that refuse the recipient stay closed to new recipients for the rest of
// the claim.
func (g *localGate) admit(ctx context.Context, tx *Tx, m campaign.Message, now time.Time) (answer, error) {
	c := g.contacts[m.Phone]
	if g.balances == nil {
		g.balances, g.windows = make([]limits.Balance, len(g.accts)), make([]limits.Window, len(g.gates))
	}
	// Decide keeps nothing of the snapshot: one pair of slices serves
	// every row.
	s := limits.Snapshot{Last: limits.Contact{At: c.at}, Global: g.global, GlobalLimit: g.gLimit,
		Accounts: g.balances, Windows: g.windows}
	if g.seen[m.Phone] {
		s.Last.At = now
	}
	var broken string
	if !c.sentAt.IsZero() {
		s.Sender = limits.Contact{At: c.sentAt, Account: accountKey(c.account)}
		for _, a := range g.accts {
			if a.ID == c.account && a.Restriction != "" && a.CooldownUntil.After(now) && c.sentAt.After(now.Add(-campaign.StickyFor)) {
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
	d := limits.Decide(s, r, now)
	if d.Reason == limits.ReasonPair {
		return answer{reason: d.Reason, until: d.Until}, nil
	}
	for _, w := range d.Refused {
		g.gates[w].blocked = true
	}
	// Whether each account's portfolio lets the recipient in.
	open := make([]bool, len(g.accts))
	for i := range open {
		w := g.window[i]
		open[i] = !g.gates[w].blocked || ratelimit.InWindow(now, s.Windows[w].Last)
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
		if broken, err = stickyBreakLocal(ctx, tx, g.campaignID, c.account); err != nil {
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

// finish returns the wait of a claim that admitted nothing.
func (g *localGate) finish(ctx context.Context, tx *Tx, n int, w claimWaits) error {
	if n > 0 {
		return nil
	}
	deferred, now := w.deferred, w.now
	if !g.picked {
		// Every row was put off: the pair gap, or a busy sticky number —
		// or, when none of those, a sticky number's full portfolio or cap.
		switch {
		case deferred.IsZero() && !w.heldReach.IsZero():
			return &campaign.WaitError{Reason: campaign.WaitReach, Until: expireBy(w.heldReach, w.deadline)}
		case deferred.IsZero() && !w.heldCap.IsZero():
			return &campaign.WaitError{Reason: campaign.WaitCapped, Until: w.heldCap}
		}
		return &campaign.WaitError{Reason: campaign.WaitRetry, Until: expireBy(deferred, w.deadline)}
	}
	reason := campaign.WaitTokens
	switch g.last.Reason {
	case ratelimit.ReasonCapped, ratelimit.ReasonEmpty:
		reason = campaign.WaitCapped
	case ratelimit.ReasonGlobal:
		reason = campaign.WaitGlobal
	}
	until := g.last.Until
	if !deferred.IsZero() && (until.IsZero() || deferred.Before(until)) && reason != campaign.WaitCapped {
		until = deferred
	}
	if freed := reachFreesAt(g.gates); !freed.IsZero() {
		// A portfolio that refused: its window makes room then, unless
		// rows put off come due before.
		switch {
		case reason == campaign.WaitCapped && !deferred.IsZero() && deferred.Before(freed):
			reason, until = campaign.WaitRetry, deferred
		case reason == campaign.WaitCapped:
			reason, until = campaign.WaitReach, freed
			// Rows put off earlier (a sticky number's token, a retry
			// time) may be recipients the window holds: wait for them
			// first, so a run that stops at the limit stops only when
			// nothing else could go. Rows held for a window or a cap
			// wait for what this claim waits for.
			var next sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM messages
				WHERE campaign_id = ? AND state = 'pending' AND next_attempt_at > ? AND window_wait NOT IN (?, ?)`,
				g.campaignID, now.UnixNano(), putOffReach, putOffCap).Scan(&next); err != nil {
				return fmt.Errorf("find the next retry: %w", err)
			}
			if next.Valid && fromNanos(next.Int64).Before(freed) {
				reason, until = campaign.WaitRetry, fromNanos(next.Int64)
			}
		case reason == campaign.WaitTokens && (until.IsZero() || freed.Before(until)):
			until = freed
		}
	}
	if reason == campaign.WaitRetry || reason == campaign.WaitReach {
		until = expireBy(until, w.deadline)
	}
	return &campaign.WaitError{Reason: reason, Until: until}
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
