package claim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// ElsewhereReason is the error message of a row skipped because another
// host sharing the limits sent its recipient the same message within 24 h,
// or has it in flight (campaign.MoveSkipElsewhere).
const ElsewhereReason = "sent by another host sharing the limits (or in flight there) within 24 h; not sent again"

// gateGroup is one portfolio's accounts in a shared claim.
type gateGroup struct {
	name  string
	gate  limits.Gate
	accts []int // indexes into the claim's accounts
	offer []limits.Account
	reach ratelimit.Reach
	// failed is why the gate could not be asked in this claim (its state
	// lost, or unreachable): the group's accounts wait, the others send.
	failed error
}

// sharedGate is the limits gate of a claim when the limits are shared
// (store.ShareLimits): each row asks the gates of the portfolios its
// accounts belong to. Accounts cooling down after a throttle (this host's
// knowledge) are not offered. The first refusal that no other row can
// escape (tokens, caps, the global bucket) ends the batch; rows the pair
// gap holds are put off, and a full portfolio still lets in the
// recipients its window holds.
type sharedGate struct {
	sh         *driver.SharedLimits
	campaignID int64
	accts      []driver.ClaimAccount
	groups     []gateGroup
	global     *ratelimit.Limit
	gap        time.Duration
	guard      string
	today      string
	used       []int            // per account, the rows admitted in this claim
	last       limits.Admission // the refusal that decides the wait
	refused    bool
	reachAt    time.Time // when a full portfolio makes room, when one refused
	gateErr    error
}

// openSharedGate gives queued refunds back and reads what the claim's
// requests need. Every account cooling down is a wait for its tokens.
func openSharedGate(ctx context.Context, tx driver.ClaimTx, sh *driver.SharedLimits, campaignID int64, accts []driver.ClaimAccount,
	global driver.GlobalBucket, now time.Time) (*sharedGate, error) {
	if _, err := flushRefunds(ctx, tx, sh); err != nil {
		if !sh.Unavailable(err) {
			return nil, err
		}
		// They stay queued; the admission below says whether to wait.
	}
	g := &sharedGate{sh: sh, campaignID: campaignID, accts: accts, used: make([]int, len(accts)), today: tx.Today(now)}
	if global.On {
		l := global.Limit
		g.global = &l
	}
	var err error
	if g.gap, err = tx.PairGap(ctx, campaignID); err != nil {
		return nil, err
	}
	if g.guard, err = tx.RepeatGuard(ctx, campaignID); err != nil {
		return nil, err
	}
	var cooling time.Time
	if g.groups, cooling, err = gateGroups(ctx, tx, sh, accts, now); err != nil {
		return nil, err
	}
	if len(g.groups) == 0 {
		// Every account rests after a throttle.
		return nil, &campaign.WaitError{Reason: campaign.WaitTokens, Until: cooling}
	}
	return g, nil
}

// read: the gates read their own state.
func (g *sharedGate) read(context.Context, driver.ClaimTx, []campaign.Message) error { return nil }

func (g *sharedGate) admit(ctx context.Context, tx driver.ClaimTx, m campaign.Message, only accountMask, now time.Time) (answer, error) {
	if only.none() || (only != nil && !g.offers(only)) {
		// None of its numbers is offered in this claim (its turn, a
		// cooldown): a while.
		return answer{own: true}, nil
	}
	host := g.sh.Host
	id := campaign.SharedClaimID(host, m.ID, m.Attempts+1)
	var (
		ad    limits.Admission
		gg    *gateGroup
		noAll = true // every group refused
		best  limits.Admission
		err   error
		index []int // the offered accounts' indexes among the claim's
	)
	// One row asks the portfolios in the same order every time, so
	// a repeated ask meets its own earlier admission.
	start := int(m.ID % int64(len(g.groups)))
	asked, elsewhere := false, false
	for k := range g.groups {
		gg = &g.groups[(start+k)%len(g.groups)]
		if gg.failed != nil {
			continue
		}
		var offer []limits.Account
		offer, index = gg.offer, gg.accts
		if only != nil {
			if offer, index = gg.only(only); len(offer) == 0 {
				continue
			}
		}
		asked = true
		req := limits.Request{ClaimID: id, Accounts: offer, Global: g.global, Today: g.today,
			Recipient: m.Phone, Reach: gg.reach, PairGap: g.gap, Sticky: campaign.StickyFor, Guard: g.guard, Host: host}
		ad, err = gg.gate.Admit(ctx, req)
		if errors.Is(err, limits.ErrRebuild) {
			// The portfolio's day was rebuilt after a loss: this
			// host's part goes in before anything it sends.
			if err = rebuildPart(ctx, tx, host, gg, g.today, now); err == nil {
				ad, err = gg.gate.Admit(ctx, req)
			}
		}
		if err == nil && ad.OK && ad.Index < 0 {
			// An earlier admission of this attempt for an account not
			// offered now (dropped meanwhile): give its cap back and
			// ask afresh under a new id.
			if _, err = gg.gate.Refund(ctx, ad.Claim); err == nil {
				req.ClaimID = id + "." + strconv.FormatInt(now.UnixNano(), 36)
				ad, err = gg.gate.Admit(ctx, req)
			}
		}
		if err != nil {
			if !errors.Is(err, limits.ErrStateLost) && !g.sh.Unavailable(err) {
				return answer{}, err
			}
			// Fail closed for this portfolio only: its accounts
			// wait, the other portfolios' keep sending.
			gg.failed, g.gateErr = err, err
			continue
		}
		if ad.OK {
			noAll = false
			break
		}
		// Every wait below is this host's: the gate's, measured on
		// its clock, counted from this host's now.
		ad.Until = ad.UntilFrom(now)
		if ad.Reason == limits.ReasonElsewhere {
			// Another host sent it or has it in flight: whatever
			// the other portfolios say, this row is not sent.
			elsewhere = true
			break
		}
		best = earlierRefusal(best, ad)
	}
	switch {
	case elsewhere:
		return answer{skip: true}, nil
	case !asked || (noAll && best.Reason == ""):
		// Every portfolio this row could go from failed.
		return answer{stop: true}, nil
	case noAll && best.StickyAccount != "":
		// The recipient waits for their own number, as in the
		// local claim; the next rows may go from the others.
		return answer{own: true, reason: best.Reason, until: best.Until}, nil
	case noAll && best.Reason == limits.ReasonPair:
		return answer{reason: best.Reason, until: best.Until}, nil
	case noAll && only != nil:
		// Only its numbers may send it (the window's): the row waits
		// for them, the next rows may go from the others.
		return answer{own: true, reason: best.Reason, until: best.Until}, nil
	case noAll && best.Reason == limits.ReasonReach:
		g.refused, g.last = true, best
		if g.reachAt.IsZero() || best.Until.Before(g.reachAt) {
			g.reachAt = best.Until
		}
		// A full window may still take the next rows' recipients.
		return answer{reason: best.Reason, until: best.Until}, nil
	case noAll:
		g.refused, g.last = true, best
		return answer{reason: best.Reason, until: best.Until, stop: true}, nil
	}
	a := answer{ok: true, account: index[ad.Index],
		shared: &campaign.SharedClaim{Portfolio: gg.name, ID: ad.Claim.ID, Account: ad.Claim.Account, Day: ad.Claim.Day}}
	if ad.StickyBroken && !ad.Replayed {
		if a.broken, err = g.stickyBreak(ctx, tx, ad.StickyAccount, now); err != nil {
			return answer{}, err
		}
	}
	g.used[a.account]++
	return a, nil
}

// offers reports whether a group asked in this claim has an account m
// lets send.
func (g *sharedGate) offers(m accountMask) bool {
	for _, gg := range g.groups {
		for _, i := range gg.accts {
			if m[i] {
				return true
			}
		}
	}
	return false
}

// only is the group's offer of the accounts m lets send, and their
// indexes among the claim's.
func (gg *gateGroup) only(m accountMask) (offer []limits.Account, index []int) {
	for k, i := range gg.accts {
		if m[i] {
			offer, index = append(offer, gg.offer[k]), append(index, i)
		}
	}
	return offer, index
}

// stickyBreak says why a recipient's sticky number (its name in the gate)
// was not offered: one of this host's numbers cooling down after a
// throttle (the local claim waits for it; the gate, which knows nothing of
// this host's cooldowns, was not offered it), else what stickyBreak says.
func (g *sharedGate) stickyBreak(ctx context.Context, tx driver.ClaimTx, gateName string, now time.Time) (string, error) {
	for _, a := range g.accts {
		if driver.GateAccount(a.PhoneNumberID) != gateName {
			continue
		}
		if a.Restriction != "" && a.CooldownUntil.After(now) {
			return campaign.StickyRestricted, nil
		}
		return campaign.StickyCooling, nil
	}
	return stickyBreak(ctx, tx, g.campaignID, 0, gateName)
}

// finish notes or clears the wait for gates that could not be asked, and
// returns the wait of a claim that admitted nothing (n == 0).
func (g *sharedGate) finish(ctx context.Context, tx driver.ClaimTx, n int, w waits) error {
	if g.gateErr != nil {
		we, err := sharedWait(ctx, tx, withoutClaimIDs(g.sh.Host), g.campaignID, g.accts, g.groups, w.now)
		if err != nil {
			return err
		}
		if n == 0 {
			return we
		}
	} else if err := tx.ClearGateWait(ctx, g.campaignID); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	return w.wait(ctx, tx, g.campaignID, refusal{refused: g.refused, reason: g.last.Reason, until: g.last.Until, freed: g.reachAt})
}

// write counts this host's sends of the day, for `account list` and the
// rate the engine sizes its requests by; the gates hold the shared count.
func (g *sharedGate) write(ctx context.Context, tx driver.ClaimTx) error {
	for i, n := range g.used {
		if n == 0 {
			continue
		}
		if err := tx.CountSends(ctx, g.accts[i].ID, n); err != nil {
			return err
		}
	}
	return nil
}

// gateGroups sorts the claim's accounts by portfolio, leaving out those
// cooling down after a throttle; cooling is when the first of those may
// send again.
func gateGroups(ctx context.Context, tx driver.ClaimTx, sh *driver.SharedLimits, accts []driver.ClaimAccount, now time.Time) (groups []gateGroup, cooling time.Time, err error) {
	byPortfolio := map[int64]int{}
	for i, a := range accts {
		if now.Before(a.Health.CooldownUntil) {
			if cooling.IsZero() || a.Health.CooldownUntil.Before(cooling) {
				cooling = a.Health.CooldownUntil
			}
			continue
		}
		k, ok := byPortfolio[a.PortfolioID]
		if !ok {
			g := gateGroup{name: driver.DefaultPortfolio}
			if a.PortfolioID != 0 {
				g.name = a.Portfolio
				limit, err := tx.ReachLimit(ctx, a)
				if err != nil {
					return nil, cooling, err
				}
				g.reach = ratelimit.Reach{Limit: limit, Margin: a.Margin}
			}
			if g.gate, err = sh.Gates.Gate(g.name); err != nil {
				return nil, cooling, fmt.Errorf("shared limits of portfolio %s: %w", g.name, err)
			}
			k = len(groups)
			byPortfolio[a.PortfolioID] = k
			groups = append(groups, g)
		}
		g := &groups[k]
		g.accts = append(g.accts, i)
		g.offer = append(g.offer, limits.Account{Name: driver.GateAccount(a.PhoneNumberID), Limit: a.Limit(now),
			DailyCap: a.Limits.DailyCap, Demoted: a.Health.Demoted(now)})
	}
	return groups, cooling, nil
}

// earlierRefusal is the refusal that lets a row go first: a wait with an
// end before one without (caps), the earlier end before the later.
func earlierRefusal(a, b limits.Admission) limits.Admission {
	switch {
	case a.Reason == "":
		return b
	case a.Until.IsZero() && !b.Until.IsZero():
		return b
	case !a.Until.IsZero() && !b.Until.IsZero() && b.Until.Before(a.Until):
		return b
	}
	return a
}

// rebuildPart adds this host's part to the group's rebuilt day.
func rebuildPart(ctx context.Context, tx driver.ClaimTx, host string, g *gateGroup, today string, now time.Time) error {
	part, err := tx.HostPart(ctx, host, g.name, today, now)
	if err != nil {
		return err
	}
	if _, err := g.gate.Rebuild(ctx, part); err != nil && !errors.Is(err, limits.ErrNotLost) {
		return err
	}
	return nil
}

// sharedWait notes that some of the campaign's portfolios cannot be asked
// (their shared state lost, or Redis unreachable) and returns the wait of
// a claim that admitted nothing: lost when any portfolio lost its state
// (a forced quota reset ends it), else unreachable (it ends by itself).
// The note says which portfolios and, for lost ones, the exact command;
// the gates' errors name claim ids, which are cut out of it.
func sharedWait(ctx context.Context, tx driver.ClaimTx, claimIDs func(string) string, campaignID int64,
	accts []driver.ClaimAccount, groups []gateGroup, now time.Time) (*campaign.WaitError, error) {
	reason := campaign.WaitLimits
	var lost, down, debug []string
	for _, g := range groups {
		if g.failed == nil {
			continue
		}
		debug = append(debug, "portfolio "+g.name+": "+g.failed.Error())
		why := claimIDs(g.failed.Error())
		if errors.Is(g.failed, limits.ErrStateLost) {
			reason = campaign.WaitLimitsLost
			var names []string
			for _, i := range g.accts {
				names = append(names, accts[i].Name)
			}
			if why == limits.ErrStateLost.Error() {
				why = "Redis holds no state for it (restarted without persistence, or never started)"
			} else {
				why = strings.TrimSuffix(why, ": "+limits.ErrStateLost.Error())
			}
			lost = append(lost, fmt.Sprintf("portfolio %s: %s; its accounts wait until `wasend quota reset --force --account %s%s` rebuilds its day from this host's count",
				g.name, why, strings.Join(names, ","), hint.StoredFlags))
			continue
		}
		down = append(down, fmt.Sprintf("portfolio %s: %s", g.name, why))
	}
	detail := strings.Join(append(lost, down...), "; ")
	if err := tx.NoteGateWait(ctx, campaignID, now, reason, detail); err != nil {
		return nil, err
	}
	return &campaign.WaitError{Reason: reason, Until: now.Add(campaign.LimitsPoll), Detail: detail, Debug: strings.Join(debug, "; ")}, nil
}

// withoutClaimIDs cuts this claim's ids ("admit HOST:ROW:ATTEMPT: ") out of a gate's
// error: user-facing text carries no internal ids.
func withoutClaimIDs(host string) func(string) string {
	return func(s string) string {
		for {
			i := strings.Index(s, "admit "+host+":")
			if i < 0 {
				return s
			}
			j := strings.Index(s[i:], ": ")
			if j < 0 {
				return s[:i]
			}
			s = s[:i] + s[i+j+2:]
		}
	}
}

// refundsPerClaim bounds the refunds one claim gives back: a backlog after
// an outage drains over a few claims.
const refundsPerClaim = 64

// flushRefunds gives queued refunds back to the gates, oldest first, at
// most refundsPerClaim, and forgets those a gate took (a refund applies
// once by its claim id, so one given back twice after a rolled-back
// transaction is harmless). It returns how many it gave back.
func flushRefunds(ctx context.Context, tx driver.ClaimTx, sh *driver.SharedLimits) (int, error) {
	queued, err := tx.QueuedRefunds(ctx, refundsPerClaim)
	if err != nil {
		return 0, err
	}
	for i, c := range queued {
		g, err := sh.Gates.Gate(c.Portfolio)
		if err != nil {
			return i, fmt.Errorf("shared limits of portfolio %s: %w", c.Portfolio, err)
		}
		if _, err := g.Refund(ctx, limits.Claim{ID: c.ID, Account: c.Account, Day: c.Day}); err != nil && sh.Unavailable(err) {
			return i, err
		}
		// Given back, given back before, or unknown (expired, or the
		// state was lost): nothing more to do. A mismatch is a bug
		// that asking again cannot fix.
		if err := tx.ForgetRefund(ctx, c.ID); err != nil {
			return i, err
		}
	}
	return len(queued), nil
}

// GiveBackRefunds gives every queued refund back to the shared limits now:
// a run's last outcomes come after its last claim, which would otherwise
// leave their refunds for the next run. What Redis cannot take stays
// queued (the error says why). Without shared limits it does nothing.
func (l *Ledger) GiveBackRefunds(ctx context.Context) error {
	for {
		var n int
		shared := false
		err := l.WithClaim(ctx, func(tx driver.ClaimTx) error {
			sh := tx.Shared()
			if sh == nil {
				return nil
			}
			shared = true
			var err error
			n, err = flushRefunds(ctx, tx, sh)
			return err
		})
		if err != nil {
			return fmt.Errorf("give refunds back to the shared limits: %w", err)
		}
		if !shared || n < refundsPerClaim {
			return nil
		}
	}
}
