package campaign

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Warm-up: a number earns its tier. An account with auto-tier on is
// promoted one tier (new → warm → active) once it has been in its tier
// PromoteAfter, sent at least its tier's daily cap on FullDays of those
// days, with a permanent-failure share under MaxFailShare and no long
// restriction (131048, 131064). It is demoted one tier at once on a
// restriction, and on a throttle storm: more than StormShare of its
// requests in an hour answered 130429.
const (
	DefaultPromoteAfter = 7 * 24 * time.Hour
	FullDays            = 3
	MaxFailShare        = 0.02
	StormShare          = 0.05
	// StormMinRequests keeps a handful of requests from making a storm.
	StormMinRequests = 20
)

// DayStats is one quota day of an account's requests.
type DayStats struct {
	Day        string // calendar day (quota day)
	Sent       int
	Requests   int
	Failed     int // answered permanent-for-the-row
	Restricted int // answered 131048 or 131064
}

// TierProgress is how far an account is on its way to the next tier.
type TierProgress struct {
	Tier, Next   string        // Next is "" at the top tier
	InTier       time.Duration // since the last change
	PromoteAfter time.Duration
	FullDays     int // days with at least the tier's cap sent
	Requests     int
	FailShare    float64
	Restricted   bool
	// Quality is the number's quality rating from the last `account sync`
	// ("" when never synced); below GREEN holds a promotion back.
	Quality string
	Ready   bool   // every rule met: promote
	Why     string // what is missing, when not Ready
}

// QualityOK reports whether a synced quality rating allows a promotion:
// GREEN, or not known (never synced, or Meta gave none).
func QualityOK(q string) bool {
	switch strings.ToUpper(q) {
	case "", "GREEN", "UNKNOWN", "NA":
		return true
	}
	return false
}

// NextTier and PrevTier are the tiers one up and one down, "" past the ends.
func NextTier(t string) string { return stepTier(t, 1) }
func PrevTier(t string) string { return stepTier(t, -1) }

func stepTier(t string, d int) string {
	i := slices.Index(TierNames, t)
	if i < 0 || i+d < 0 || i+d >= len(TierNames) {
		return ""
	}
	return TierNames[i+d]
}

// AssessTier judges an account in tier since the given time, with its
// tier's daily cap, its days in the tier and its synced quality rating
// ("" when unknown: the rule applies only when Meta's rating was read).
func AssessTier(tier string, since, now time.Time, promoteAfter time.Duration, dailyCap int, days []DayStats, quality string) TierProgress {
	p := TierProgress{Tier: tier, Next: NextTier(tier), InTier: now.Sub(since), PromoteAfter: promoteAfter, Quality: quality}
	failed := 0
	for _, d := range days {
		if dailyCap > 0 && d.Sent >= dailyCap {
			p.FullDays++
		}
		p.Requests += d.Requests
		failed += d.Failed
		if d.Restricted > 0 {
			p.Restricted = true
		}
	}
	if p.Requests > 0 {
		p.FailShare = float64(failed) / float64(p.Requests)
	}
	switch {
	case p.Next == "":
		p.Why = "top tier"
	case p.InTier < promoteAfter:
		p.Why = fmt.Sprintf("%s of %s in tier", days1(p.InTier), days1(promoteAfter))
	case p.FullDays < FullDays:
		p.Why = fmt.Sprintf("%d of %d days at the daily cap", p.FullDays, FullDays)
	case p.FailShare >= MaxFailShare:
		p.Why = fmt.Sprintf("%.1f%% permanent failures (under %.0f%% needed)", 100*p.FailShare, 100*MaxFailShare)
	case p.Restricted:
		p.Why = "restricted (131048/131064) in this tier"
	case !QualityOK(quality):
		p.Why = fmt.Sprintf("quality rating %s (GREEN needed; `wasend account sync` reads it)", quality)
	default:
		p.Ready = true
	}
	if !p.Ready && p.Next != "" && p.InTier < promoteAfter {
		p.Why += fmt.Sprintf(", %d of %d days at the daily cap", p.FullDays, FullDays)
	}
	return p
}

func days1(d time.Duration) string {
	return fmt.Sprintf("%.1f d", d.Hours()/24)
}

// TierChange is one change of an account's tier, with its reason.
type TierChange struct {
	Account  string
	At       time.Time
	From, To string // From is "" when the account was added
	Reason   string
}
