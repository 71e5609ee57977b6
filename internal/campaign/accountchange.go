package campaign

import "fmt"

// AccountChange is a partial update of an account; nil fields stay as they are.
type AccountChange struct {
	Tier          *string
	PhoneNumberID *string
	TokenEnv      *string
	Rate          *float64 // a value <= 0 clears the override
	Burst         *int     // a value <= 0 clears the override
	DailyCap      *int     // a value < 0 clears the override
	Disabled      *bool
	Portfolio     *string  // "" takes the account out of its portfolio
	Throughput    *float64 // pins the throughput: Unlimited for none, 0 unpins
	WABA          *string  // "" forgets the account's WABA
	API           *API     // the endpoint when a run gives no --api
}

// Apply makes the change to a. The store makes what follows from it: a
// tier change logged and its time in tier restarted, a number checked free,
// the portfolio looked up, the bucket settled at the new limits.
func (ch AccountChange) Apply(a *Account) error {
	if ch.Tier != nil {
		if !ValidTier(*ch.Tier) {
			return fmt.Errorf("tier %q: must be one of new, warm, active", *ch.Tier)
		}
		a.Tier = *ch.Tier
	}
	set(&a.PhoneNumberID, ch.PhoneNumberID)
	set(&a.TokenEnv, ch.TokenEnv)
	set(&a.Disabled, ch.Disabled)
	set(&a.WABA, ch.WABA)
	set(&a.API, ch.API)
	set(&a.Portfolio, ch.Portfolio)
	set(&a.ThroughputPinned, ch.Throughput)
	// Out of range, a value clears the override: the tier's holds.
	if v := ch.Rate; v != nil {
		a.Overrides.Rate = overrideIf(*v, *v > 0)
	}
	if v := ch.Burst; v != nil {
		a.Overrides.Burst = overrideIf(*v, *v >= 1)
	}
	if v := ch.DailyCap; v != nil {
		a.Overrides.DailyCap = overrideIf(*v, *v >= 0)
	}
	return nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func overrideIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

// SendLimits is what a sends at under its tier's limits: its overrides laid
// over them, held to its number's throughput (what was pinned, else read).
func (a Account) SendLimits(tier Limits, read float64) Limits {
	return a.Overrides.Apply(tier).CapThroughput(EffectiveThroughput(a.ThroughputPinned, read))
}
