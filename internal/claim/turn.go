package claim

import (
	"context"
	"math"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
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
	idle      bool // the campaign was idle (noteIdle): a claim that sends ends it
}

// takeTurn decides whether campaign id may take tokens now. Competing are
// the other running, started campaigns that a live process sends, that
// have rows due, and whose last claim could send (noteIdle): a turn that a
// campaign cannot use goes to those that can. While one of a higher class
// competes, the claim waits (WaitPriority). Within the class the campaign
// furthest behind by served/weight goes (weighted fair queuing); a
// campaign that joins, or comes back, starts level with the one furthest
// behind, not with credit for the time it was away.
func takeTurn(ctx context.Context, tx store.ClaimTx, id int64, now time.Time, max int) (turn, error) {
	ct, err := tx.Turn(ctx, id, now, now.Add(-competingWithin))
	if err != nil {
		return turn{id: id, max: max}, err
	}
	return decideTurn(id, ct, now, max)
}

// decideTurn is takeTurn's arithmetic over what the store read.
func decideTurn(id int64, ct store.ClaimTurn, now time.Time, max int) (turn, error) {
	t := turn{id: id, max: max, share: ct.Share, served: ct.Served, idle: ct.Idle}
	t.share.Weight = max1(t.share.Weight)
	var (
		higher bool
		least  = math.Inf(1) // the least served of the class
		next   = math.Inf(1) // the least served after one more token
	)
	for _, o := range ct.Others {
		switch {
		case o.Priority > t.share.Priority:
			higher = true
		case o.Priority == t.share.Priority:
			least, next = min(least, o.Served), min(next, o.Served+1/float64(max1(o.Weight)))
		}
	}
	if higher {
		return t, &campaign.WaitError{Reason: campaign.WaitPriority, Until: now.Add(time.Second)}
	}
	if math.IsInf(least, 1) {
		return t, nil
	}
	t.competing = true
	step := 1 / float64(t.share.Weight)
	// A campaign that joins (or comes back) starts one of its tokens
	// behind the least served, not with credit for the time it was away.
	t.served = math.Max(t.served, least-step)
	if t.served+step > next+1e-9 {
		// Another campaign's next token comes before ours (weighted fair
		// queuing by finish tags): it goes first. Its process claims as
		// soon as a token is there; look again a little later.
		return t, &campaign.WaitError{Reason: campaign.WaitPriority, Until: now.Add(100 * time.Millisecond)}
	}
	// As many tokens as keep our finish tag no later than theirs.
	t.max = min(max, int((next-t.served)/step+1e-9))
	return t, nil
}

// idleFor is how long a campaign whose claim waits for a daily cap gives
// its turns away: caps end with a quota reset, at no known time.
const idleFor = time.Minute

// noteIdle marks a campaign whose claim could send nothing now for its
// numbers' tokens, caps or portfolios' windows as idle until the wait ends:
// takeTurn leaves it out of the competition meanwhile. A claim that waits
// for its turn, or for rows not yet due, says nothing of that.
func noteIdle(ctx context.Context, tx store.ClaimTx, id int64, we *campaign.WaitError, now time.Time) error {
	until := we.Until
	switch we.Reason {
	case campaign.WaitTokens, campaign.WaitGlobal, campaign.WaitReach:
	case campaign.WaitCapped:
		until = now.Add(idleFor)
	default:
		return nil
	}
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
func (t turn) took(ctx context.Context, tx store.ClaimTx, n int) error {
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
