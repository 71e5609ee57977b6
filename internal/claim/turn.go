package claim

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store/driver"
)

// competingWithin is how recent a runner's heartbeat must be for its
// campaign to compete for tokens (runners beat every 2 s): a campaign
// whose process died stops holding others back after it.
const competingWithin = 15 * time.Second

// turn is a claim's place among the campaigns competing for the accounts,
// decided in the claim's transaction so that every process on the
// database agrees.
type turn struct {
	id     int64
	share  campaign.Share
	served float64 // tokens taken while competing, over the weight
	// competing is whether another campaign of the same class competes:
	// then served counts, and max bounds this claim's tokens.
	competing bool
	max       int
	// only, when not nil, are the accounts the claim may take tokens
	// from: those no campaign it waits for may use.
	only []int64
	idle bool // the campaign was idle (noteIdle): a claim that sends ends it
}

// turnLag is how far, in tokens of a campaign of weight 1, a campaign may
// go ahead of the least served competitor of its class before it waits for
// its turn. Processes ask at their own moments, not in turns: with no lag
// a claim took one token and the campaign then waited while the one behind
// had not yet asked, and the tokens between lapsed (three processes on
// three numbers used them 0.19-0.59 of the time). A few tokens of lag let
// whoever asks take what is there, and bound how far the shares drift.
const turnLag = 8

// turnWait is how long a campaign that is turnLag ahead waits before it
// asks again: those behind claim meanwhile.
const turnWait = 50 * time.Millisecond

// takeTurn decides whether campaign id may take tokens now from its
// accounts mine. Competing are the other running, started campaigns that a
// live process sends, that have rows due, whose last claim could send
// (noteIdle), and that may send from one of mine: a turn that a campaign
// cannot use goes to those that can. While one of a higher class competes,
// the claim waits (WaitPriority). Within the class a campaign takes tokens
// as long as it stays within turnLag of the least served by served/weight
// (weighted fair queuing, work-conserving: whoever asks takes the tokens
// that are there, until it is that far ahead); a campaign that joins, or
// comes back, starts level with the one furthest behind, not with credit
// for the time it was away. Held back, a claim still takes the tokens of
// those of mine that none of the campaigns it waits for may use.
func takeTurn(ctx context.Context, tx driver.ClaimTx, id int64, mine []int64, now time.Time, max int) (turn, error) {
	ct, err := tx.Turn(ctx, id, now, now.Add(-competingWithin))
	if err != nil {
		return turn{id: id, max: max}, err
	}
	return decideTurn(id, ct, mine, now, max)
}

// decideTurn is takeTurn's arithmetic over what the store read.
func decideTurn(id int64, ct driver.ClaimTurn, mine []int64, now time.Time, max int) (turn, error) {
	t := turn{id: id, max: max, share: ct.Share, served: ct.Served, idle: ct.Idle}
	t.share.Weight = max1(t.share.Weight)
	var higher []driver.Competitor
	for _, o := range ct.Others {
		if o.Priority > t.share.Priority && o.Uses(mine) {
			higher = append(higher, o)
		}
	}
	if len(higher) > 0 {
		if mine = unusedBy(mine, higher); len(mine) == 0 {
			return t, &campaign.WaitError{Reason: campaign.WaitPriority, Until: now.Add(time.Second)}
		}
		t.only = mine
	}
	var (
		class []driver.Competitor
		least = math.Inf(1) // the least served of the class
	)
	for _, o := range ct.Others {
		if o.Priority == t.share.Priority && o.Uses(mine) {
			class = append(class, o)
			least = min(least, o.Served)
		}
	}
	if len(class) == 0 {
		return t, nil
	}
	t.competing = true
	step := 1 / float64(t.share.Weight)
	// A campaign that joins (or comes back) starts one of its tokens
	// behind the least served, not with credit for the time it was away.
	// One that competed all along is never more than turnLag behind (the
	// others wait at turnLag ahead of it): it keeps what it is owed.
	if t.served < least-turnLag-1e-9 {
		t.served = least - step
	}
	// As many tokens as keep it within turnLag of the least served.
	if n := int((least+turnLag-t.served)/step + 1e-9); n >= 1 {
		t.max = min(max, n)
		return t, nil
	}
	// turnLag ahead of those behind: what they cannot use is still this
	// campaign's, and, theirs to none, not booked.
	var behind []driver.Competitor
	for _, o := range class {
		if o.Served+turnLag < t.served+step-1e-9 {
			behind = append(behind, o)
		}
	}
	if mine = unusedBy(mine, behind); len(mine) == 0 {
		return t, &campaign.WaitError{Reason: campaign.WaitPriority, Until: now.Add(turnWait)}
	}
	t.only, t.competing = mine, false
	return t, nil
}

// unusedBy returns the accounts of mine that none of others may use.
func unusedBy(mine []int64, others []driver.Competitor) []int64 {
	var out []int64
	for _, a := range mine {
		if !slices.ContainsFunc(others, func(o driver.Competitor) bool { return o.Uses([]int64{a}) }) {
			out = append(out, a)
		}
	}
	return out
}

// idleFor is how long a campaign whose claim waits for a daily cap gives
// its turns away: caps end with a quota reset, at no known time.
const idleFor = time.Minute

// idleSlack is how much earlier than its wait a campaign's idleness ends.
const idleSlack = time.Millisecond

// noteIdle marks a campaign whose claim could send nothing now for its
// numbers' tokens, caps or portfolios' windows as idle until the wait ends:
// takeTurn leaves it out of the competition meanwhile. A claim that waits
// for its turn, or for rows not yet due, says nothing of that.
func noteIdle(ctx context.Context, tx driver.ClaimTx, id int64, we *campaign.WaitError, now time.Time) error {
	until := we.Until
	switch we.Reason {
	case campaign.WaitTokens, campaign.WaitGlobal, campaign.WaitReach, campaign.WaitHeld:
	case campaign.WaitCapped:
		until = now.Add(idleFor)
	default:
		return nil
	}
	// A wait's end is rounded up to the nanosecond the token is whole, a
	// hair after a claim may take it: the idleness ends a little before,
	// so that a claim asking at that instant still sees this campaign
	// compete for the token it waits for.
	until = until.Add(-idleSlack)
	if !until.After(now) {
		return nil
	}
	// Never shortened: a claim that found no token did not ask the
	// portfolios about its rows, and rows they refused are still refused.
	return tx.Idle(ctx, id, until)
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// lend raises the buckets a high-priority campaign sees by what it may
// borrow — its borrow of each account's rate, at most the burst — and
// returns how much, for repay. Caps and the global bucket are not lent.
func (t turn) lend(cands []ratelimit.Candidate, now time.Time) []float64 {
	if t.share.Priority != campaign.High || t.share.Borrow <= 0 {
		return nil
	}
	lent := make([]float64, len(cands))
	for i := range cands {
		c := &cands[i]
		a := math.Min(t.share.Borrow.Seconds()*c.Limit.Rate, float64(c.Limit.Burst))
		if !(a > 0) {
			continue
		}
		lent[i] = a
		c.Bucket = ratelimit.Bucket{Tokens: c.Bucket.TokensAt(c.Limit, now) + a, At: now}
		c.Limit.Burst += int(math.Ceil(a))
	}
	return lent
}

// repay takes back what lend lent: a bucket may be left below zero, a debt
// that every later claim, of any class, waits out before it sends.
func (t turn) repay(cands []ratelimit.Candidate, lent []float64) {
	for i, a := range lent {
		if a == 0 {
			continue
		}
		c := &cands[i]
		c.Limit.Burst -= int(math.Ceil(a))
		c.Bucket.Tokens -= a
	}
}

// took books n tokens taken by the campaign while others compete, and
// ends its idleness.
func (t turn) took(ctx context.Context, tx driver.ClaimTx, n int) error {
	if t.idle && n > 0 {
		if err := tx.Idle(ctx, t.id, time.Time{}); err != nil {
			return err
		}
	}
	if !t.competing || n == 0 {
		return nil
	}
	return tx.SetServed(ctx, t.id, t.served+float64(n)/float64(t.share.Weight))
}
