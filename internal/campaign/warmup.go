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

// TierRequest is one request an account made, as warm-up counts it.
type TierRequest struct {
	At             time.Time // claimed
	Outcome, Class string    // the attempt's outcome and class, "" while unanswered
	ErrorCode      int
}

// DaysOf sums an account's requests by quota day in loc, oldest day first.
// A request never sent (class not-sent) is not a request.
func DaysOf(reqs []TierRequest, loc *time.Location) []DayStats {
	byDay := map[string]*DayStats{}
	for _, r := range reqs {
		if r.Class == "not-sent" {
			continue
		}
		day := QuotaDay(r.At, loc)
		d := byDay[day]
		if d == nil {
			d = &DayStats{Day: day}
			byDay[day] = d
		}
		d.Requests++
		switch {
		case r.Outcome == "sent":
			d.Sent++
		case r.Class == "permanent":
			d.Failed++
		}
		if r.ErrorCode == 131048 || r.ErrorCode == 131064 {
			d.Restricted++
		}
	}
	out := make([]DayStats, 0, len(byDay))
	for _, d := range byDay {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b DayStats) int { return strings.Compare(a.Day, b.Day) })
	return out
}

// CheckPromoteAfter refuses a time to promotion that is not more than zero.
func CheckPromoteAfter(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("promote after %v: must be more than zero", d)
	}
	return nil
}

// AutoTierNote is the reason the tier log gives when warm-up is turned on
// or off (on), for an account just added (added) or by the operator.
func AutoTierNote(on, added bool) string {
	switch {
	case added && on:
		return "added, auto-tier on"
	case added:
		return "added, tier kept by hand"
	case on:
		return "auto-tier on"
	}
	return "auto-tier off: tier kept by hand"
}

// Promotion is the reason a promotion logs: what the account did in its
// tier, whose daily cap is dailyCap.
func (p TierProgress) Promotion(dailyCap int) string {
	why := fmt.Sprintf("promoted: %.1f days in %s, %d days at the daily cap of %d, %.1f%% permanent failures, no restriction",
		p.InTier.Hours()/24, p.Tier, p.FullDays, dailyCap, 100*p.FailShare)
	if p.Quality != "" {
		why += ", quality " + p.Quality
	}
	return why
}

// MayDemote reports whether an outcome can demote its account: a long
// restriction, or a 130429 throttle.
func MayDemote(o Outcome) bool {
	return o.Restrict > 0 || (o.Throttle != nil && o.ErrorCode == 130429)
}

// Demotion judges an auto-tier account in tier since the given time on
// outcome o: one tier down at once on a long restriction, or on a throttle
// storm — over StormShare of its requests in the last hour answered 130429,
// judged only once an hour after a change, so one storm demotes once.
// lastHour counts those requests and 130429s, asked only for a storm; o's
// own answer is not among them yet. to is "" when the account stays.
func Demotion(tier string, since, now time.Time, o Outcome, lastHour func() (requests, throttled int, err error)) (to, why string, err error) {
	down := PrevTier(tier)
	if !MayDemote(o) || down == "" {
		return "", "", nil
	}
	if o.Restrict > 0 {
		return down, "demoted: restricted: " + o.Error, nil
	}
	if now.Sub(since) < time.Hour {
		return "", "", nil
	}
	requests, throttled, err := lastHour()
	if err != nil {
		return "", "", err
	}
	throttled++ // this answer
	if requests < StormMinRequests || float64(throttled)/float64(requests) <= StormShare {
		return "", "", nil
	}
	return down, fmt.Sprintf("demoted: throttle storm: %d of %d requests in the last hour answered 130429", throttled, requests), nil
}
