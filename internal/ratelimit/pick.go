package ratelimit

import "time"

// Candidate is one account's limiter state offered to Pick.
type Candidate struct {
	Limit    Limit
	Bucket   Bucket
	Used     int // sends counted in the current quota day
	DailyCap int // 0 means the account may send nothing today
	// NotBefore holds an account back (a cool-down) until that instant.
	NotBefore time.Time
	// Demoted accounts (recently throttled) are chosen only when no
	// healthy account has a token.
	Demoted bool
}

// Reason says why Pick chose no account.
type Reason string

const (
	ReasonNone   Reason = ""
	ReasonTokens Reason = "tokens" // every account with quota left waits for a token
	ReasonGlobal Reason = "global" // the global bucket is empty
	ReasonCapped Reason = "capped" // every account reached its daily cap
	ReasonEmpty  Reason = "empty"  // no candidates at all
)

// Decision is the outcome of Pick: either an account index, or a reason and,
// when one is known, the earliest instant worth asking again.
type Decision struct {
	Index  int
	Reason Reason
	Until  time.Time // zero when only a quota reset can help
}

// Pick chooses which candidate sends one message at t. Among the accounts
// with quota left and a whole token, healthy ones before demoted ones, it
// takes the one whose bucket is fullest relative to its burst: that bucket
// is the closest to wasting refill. A non-nil global bucket must hold a
// token too.
func Pick(t time.Time, cands []Candidate, global *Bucket, globalLimit Limit) Decision {
	if len(cands) == 0 {
		return Decision{Index: -1, Reason: ReasonEmpty}
	}
	best, bestFill, bestDemoted := -1, -1.0, true
	var earliest time.Time
	for i, c := range cands {
		if c.Used >= c.DailyCap {
			continue
		}
		ready := c.Bucket.ReadyAt(c.Limit, t, 1)
		if ready.IsZero() {
			continue // a burst below one token can never send
		}
		if c.NotBefore.After(ready) {
			ready = c.NotBefore
		}
		if !ready.After(t) {
			fill := c.Bucket.TokensAt(c.Limit, t) / float64(c.Limit.Burst)
			if best < 0 || (bestDemoted && !c.Demoted) || (bestDemoted == c.Demoted && fill > bestFill) {
				best, bestFill, bestDemoted = i, fill, c.Demoted
			}
			continue
		}
		if earliest.IsZero() || ready.Before(earliest) {
			earliest = ready
		}
	}
	if best < 0 {
		if earliest.IsZero() {
			return Decision{Index: -1, Reason: ReasonCapped}
		}
		return Decision{Index: -1, Reason: ReasonTokens, Until: earliest}
	}
	if global != nil {
		if ready := global.ReadyAt(globalLimit, t, 1); ready.IsZero() || ready.After(t) {
			return Decision{Index: -1, Reason: ReasonGlobal, Until: ready}
		}
	}
	return Decision{Index: best}
}
