// Package report computes what `status`, `campaign list`, `campaign show`
// and their --json print: each account's and campaign's true state, its
// figures, their healthy ranges and the ETA. Commands only format it.
package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/planner"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
)

// The healthy ranges. A figure past one is flagged in tables and listed in
// Health.Unhealthy.
const (
	// MaxThrottleRate is the share of requests throttled from which a
	// sender is pushing its limits.
	MaxThrottleRate = 0.01
	// MaxAvgAttempts is the requests per message from which retries cost
	// noticeably.
	MaxAvgAttempts = 1.5
	// MinUtilisation and MaxUtilisation bound the share of earned tokens
	// spent while work waits: below, limits (cool-downs, caps) hold the
	// sender back.
	MinUtilisation = 0.7
	MaxUtilisation = 1.0
)

// LiveWithin is how recent a runner's heartbeat must be for its campaign
// to count as running (runners beat every 2 s); on the reader's machine a
// runner whose process is gone stops counting at once (Reporter.Live).
const LiveWithin = 15 * time.Second

// Displayed campaign states beyond the stored ones.
const (
	StateRunning     = "running"             // a live process sends it
	StateReady       = "ready"               // imported, never started
	StateInterrupted = "interrupted"         // started, no process sends it now
	StateWaitQuota   = "waiting for quota"   // a live process waits: every usable account is capped
	StateWaitAPI     = "waiting for the API" // a live process waits out a Cloud API outage
	// StateWaitLimits: a live process shares its limits through Redis
	// (--limits) and cannot ask them (unreachable, or its state lost):
	// it claims nothing until they answer.
	StateWaitLimits = "waiting for shared limits"
	// StateRetryLater: no process sends it, and nothing is due before a
	// retry time (a run ended "done for now", e.g. after 131049 webhooks).
	StateRetryLater = "retries due later"
	StateScheduled  = "scheduled" // its start (--at) is still ahead
)

// Status is the documented shape of `wasend status --json`.
type Status struct {
	Database    string          `json:"database"`
	Accounts    []AccountStatus `json:"accounts"`
	GlobalLimit *Global         `json:"global_limit"`
	Campaigns   []Campaign      `json:"campaigns"`
	Portfolios  []Portfolio     `json:"portfolios"`
	// QuotaResetOverdue is set when the calendar of quota days is past an
	// account's open quota day: the day's quota reset (cron's) did not run.
	QuotaResetOverdue *QuotaResetOverdue `json:"quota_reset_overdue,omitempty"`
	// Runners are the registered sender processes, by host.
	Runners []Runner `json:"runners"`
}

// Runner is one sender process as status lists it: where it runs, the
// campaign it sends, how long since its heartbeat, the rows it leases, and
// whether it is lost — silent for two heartbeats (campaign.LostAfter), or
// its process gone on this machine — and its leases about to be taken.
type Runner struct {
	Host         string  `json:"host"`
	PID          int     `json:"pid"`
	ID           string  `json:"id"`
	Campaign     int64   `json:"campaign"`
	HeartbeatAge float64 `json:"heartbeat_age_seconds"`
	Leased       int     `json:"leased_rows"`
	Lost         bool    `json:"lost"`
}

// RunnerReads is a Reads that lists the runners (*readmodel.Reader does).
type RunnerReads interface {
	Runners(ctx context.Context) ([]readmodel.RunnerLeases, error)
}

// runners lists the runners with their state at the reporter's instant,
// by the one liveness rule (campaign.Liveness) with two heartbeats of
// silence as its limit.
func (r Reporter) runners(ctx context.Context) ([]Runner, error) {
	rr, ok := r.Reads.(RunnerReads)
	if !ok {
		return nil, nil
	}
	rs, err := rr.Runners(ctx)
	if err != nil {
		return nil, err
	}
	live := r.Live
	live.Stale = campaign.LostAfter
	out := make([]Runner, 0, len(rs))
	for _, x := range rs {
		out = append(out, Runner{Host: x.Host, PID: x.PID, ID: x.ID, Campaign: x.CampaignID,
			HeartbeatAge: max(r.Now.Sub(x.HeartbeatAt), 0).Seconds(), Leased: x.Leased, Lost: live.Dead(x.Runner, r.Now)})
	}
	return out, nil
}

// QuotaResetOverdue says which accounts still count a quota day that is
// over in the zone of quota days.
type QuotaResetOverdue struct {
	Today    string   `json:"today"` // in Zone
	Zone     string   `json:"zone"`
	OpenDay  string   `json:"open_quota_day"` // the oldest open quota day among Accounts
	Accounts []string `json:"accounts"`
	// Command starts the day; the command's caller fills it in, with the
	// global flags it was given.
	Command string `json:"command"`
}

// quotaResetOverdue is the accounts whose quota day is before today's
// date in loc, or nil when none.
func quotaResetOverdue(accts []AccountStatus, now time.Time, loc *time.Location) *QuotaResetOverdue {
	today := now.In(loc).Format(time.DateOnly)
	var o *QuotaResetOverdue
	for _, a := range accts {
		if a.QuotaDay == "" || a.QuotaDay >= today {
			continue
		}
		if o == nil {
			o = &QuotaResetOverdue{Today: today, Zone: loc.String(), OpenDay: a.QuotaDay}
		}
		o.OpenDay = min(o.OpenDay, a.QuotaDay)
		o.Accounts = append(o.Accounts, a.Name)
	}
	return o
}

// Global is the global bucket, when on.
type Global struct {
	Rate   float64 `json:"rate_per_second"`
	Burst  int     `json:"burst"`
	Tokens float64 `json:"tokens"`
}

// Campaign is a campaign in `status --json` and `campaign list --json`.
type Campaign struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	State       string     `json:"state"`
	PauseReason string     `json:"pause_reason,omitempty"`
	Source      string     `json:"source"`
	Total       int        `json:"total"`
	Sent        int        `json:"sent"`
	Pending     int        `json:"pending"`
	Sending     int        `json:"sending"`
	Failed      int        `json:"failed"`
	Unknown     int        `json:"unknown"`
	Expired     int        `json:"expired"`
	Skipped     int        `json:"skipped"`
	CreatedAt   time.Time  `json:"created_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	// The schedule: the start (--at) a "scheduled" campaign waits for,
	// when its pending rows expire (--expire-after, once started), and its
	// send window in each recipient's time zone.
	StartAt    *time.Time `json:"start_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	SendWindow string     `json:"send_window,omitempty"`
	// How it shares the accounts with other campaigns.
	Priority string `json:"priority"` // high, normal or low
	Weight   int    `json:"weight"`
	// Health: share of requests throttled (overall and last hour), and
	// requests per message tried.
	Ready            int        `json:"ready"`          // pending rows that may go now
	WaitingRetry     int        `json:"waiting_retry"`  // pending rows waiting for a retry time
	WaitingWindow    int        `json:"waiting_window"` // pending rows waiting for their send window
	StartedAt        *time.Time `json:"started_at,omitempty"`
	ThrottleRate     float64    `json:"throttle_rate"`
	ThrottleRateHour float64    `json:"throttle_rate_1h"`
	AvgAttempts      float64    `json:"avg_attempts"`
	DroppedAccounts  []Dropped  `json:"dropped_accounts,omitempty"`
	// StickyBroken counts the recipients who could not get the number that
	// messaged them within 30 days, by why: disabled, restricted, dropped,
	// removed.
	StickyBroken map[string]int `json:"sticky_broken"`
	Outage       *Outage        `json:"outage,omitempty"`
	// LimitsWait: the campaign's host waits for the limits it shares
	// through Redis.
	LimitsWait *LimitsWait `json:"limits_wait,omitempty"`
	ETA        *ETA        `json:"eta,omitempty"`
	// The same figures as an account's health, over this campaign's
	// requests: the last hour (of its sending, once finished) and overall.
	LastHour Health `json:"last_hour"`
	Overall  Health `json:"overall"`
	// Delivery is what status webhooks said, once one reported.
	Delivery *Delivery `json:"delivery,omitempty"`
	// Held counts sends Meta holds for quality assessment (not in Sent,
	// nor failed) until a status settles them; HeldStop: the campaign adds
	// no sends meanwhile (--max-held).
	Held     int  `json:"held,omitempty"`
	HeldStop bool `json:"held_stop,omitempty"`
	// Cost is there when a rate card was imported (wasend pricing import).
	Cost *CampaignCost `json:"cost,omitempty"`
}

// Outage is a Cloud API outage a running campaign waits out.
type Outage struct {
	Since     time.Time `json:"since"`
	Error     string    `json:"error"`
	NextProbe time.Time `json:"next_probe"`
}

// LimitsWait is a host's wait for the limits it shares through Redis.
type LimitsWait struct {
	Since time.Time `json:"since"`
	// Lost: Redis answers but holds no state; only `wasend quota reset
	// --force --limits URL` starts it again. Otherwise it is unreachable.
	Lost  bool   `json:"lost"`
	Error string `json:"error"`
}

// Dropped is an account stopped for a campaign.
type Dropped struct {
	Account   string    `json:"account"`
	Reason    string    `json:"reason"`
	ErrorCode int       `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

// Account is the stable JSON shape of an account. The token's variable
// name is shown; its value never is.
type Account struct {
	Name          string  `json:"name"`
	PhoneNumberID string  `json:"phone_number_id"`
	Tier          string  `json:"tier"`
	TokenEnv      string  `json:"token_env"`
	Rate          float64 `json:"rate_per_second"`
	EffectiveRate float64 `json:"effective_rate_per_second"`
	Burst         int     `json:"burst"`
	DailyCap      int     `json:"daily_cap"`
	Tokens        float64 `json:"tokens"`
	// TokensShared: Tokens is the bucket in Redis that every host sharing
	// the limits (--limits) takes from, not this database's own.
	TokensShared  bool       `json:"tokens_shared,omitempty"`
	SentToday     int        `json:"sent_today"`
	QuotaDay      string     `json:"quota_day"`
	State         string     `json:"state"`
	Disabled      bool       `json:"disabled"`
	CooldownUntil *time.Time `json:"cooldown_until,omitempty"`
	Restriction   string     `json:"restriction,omitempty"`
	LastErrorCode int        `json:"last_error_code,omitempty"`
	Portfolio     string     `json:"portfolio,omitempty"`
	WABA          string     `json:"waba_id,omitempty"`
	// API is the account's --api for runs that give none (account set
	// --api; "" is cloud); MarketingMessages is its WABA's onboarding to
	// the Marketing Messages API as last synced ("" when never read).
	API               string `json:"api,omitempty"`
	MarketingMessages string `json:"marketing_messages_onboarding,omitempty"`
	// Throughput is the number's messages per second (0: unlimited);
	// ThroughputSource says where it came from: default, meta, pinned.
	Throughput       float64 `json:"throughput"`
	ThroughputSource string  `json:"throughput_source"`
	// What `account sync` or the last run's preflight read, and when.
	QualityRating  string     `json:"quality_rating,omitempty"`
	MessagingLimit string     `json:"messaging_limit,omitempty"`
	SyncedAt       *time.Time `json:"synced_at,omitempty"`
	// CheckFailed is why the last check (a run's preflight, `account
	// test`) failed, until one passes.
	CheckFailed *CheckFailed `json:"check_failed,omitempty"`
}

// CheckFailed is an account check's finding: the Graph error code (0:
// none, e.g. the token variable is unset), the error, never a token, and
// when.
type CheckFailed struct {
	Code  int       `json:"code,omitempty"`
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

// LastErrorCode is the code an account's LAST ERROR shows: its failed
// check's, while it has one, else its last request's.
func LastErrorCode(a campaign.AccountStatus) int {
	if a.Check.Failed() && a.Check.Code != 0 {
		return a.Check.Code
	}
	return a.LastErrorCode
}

// AccountStatus is an account in `status --json`: its settings and state,
// plus how it has been doing.
type AccountStatus struct {
	Account
	// TierProgress is an auto-tier account's way to its next tier; nil
	// when its tier is kept by hand.
	TierProgress *TierProgress `json:"tier_progress,omitempty"`
	Sent24h      int           `json:"sent_24h"`
	LastHour     Health        `json:"last_hour"`
	Overall      Health        `json:"overall"`
	// Delivery is what status webhooks said of its messages, over every
	// campaign, once one reported.
	Delivery *Delivery `json:"delivery,omitempty"`
}

// Health are the operating figures of an account or campaign over a
// window. Unhealthy lists the ones outside their healthy range:
// throttle_rate, avg_attempts, utilisation (see the constants).
type Health struct {
	Attempts     int      `json:"attempts"`
	ThrottleRate float64  `json:"throttle_rate"`
	AvgAttempts  float64  `json:"avg_attempts"`
	Utilisation  float64  `json:"utilisation"`
	Unhealthy    []string `json:"unhealthy,omitempty"`
}

// Bad reports whether the named figure is outside its healthy range.
func (h Health) Bad(name string) bool { return slices.Contains(h.Unhealthy, name) }

// Source is what a report reads from the store.
type Source interface {
	Path() string
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Counts(ctx context.Context, id int64) (campaign.Counts, error)
	Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error)
}

// Reads are what a report reads from the read models (*readmodel.Reader).
type Reads interface {
	TierProgress(ctx context.Context) (map[string]campaign.TierProgress, error)
	CampaignStats(ctx context.Context, id int64) (readmodel.Stats, error)
	DroppedAccounts(ctx context.Context, id int64) ([]readmodel.Dropped, error)
	CampaignQueue(ctx context.Context, id int64) (readmodel.Queue, error)
	Activity(ctx context.Context, since time.Time, campaignID int64) (map[string]readmodel.Activity, error)
	AccountActivity(ctx context.Context, since time.Time) (map[string]readmodel.Activity, error)
	LiveRunners(ctx context.Context, live campaign.Liveness, now time.Time) (map[int64]int, error)
	CampaignDelivery(ctx context.Context, id int64) (readmodel.DeliveryFigures, error)
	AccountDelivery(ctx context.Context, campaignID int64) (map[string]readmodel.DeliveryFigures, error)
	StaleUnknown(ctx context.Context, id int64, grace time.Duration) (int, error)
	Outage(ctx context.Context, id int64) (campaign.Outage, error)
	LimitsWait(ctx context.Context, id int64) (campaign.LimitsWait, error)
	OpenZones(ctx context.Context, id int64) (map[string]int, error)
	StickyBreaks(ctx context.Context, campaignID int64) (map[string]int, error)
	PortfolioWindows(ctx context.Context) ([]readmodel.PortfolioWindow, error)
	GlobalLimit(ctx context.Context) (l ratelimit.Limit, tokens float64, ok bool, err error)
	Campaigns(ctx context.Context) ([]campaign.Campaign, error)
}

// Reporter reads a Source and its Reads at one instant, in the time zone
// of quota days.
type Reporter struct {
	Src   Source
	Reads Reads
	Now   time.Time
	Loc   *time.Location
	// Live says which runners still run: this machine's process table as
	// its probe (runner.Liveness). Its zero value lets heartbeats alone
	// decide; Stale defaults to LiveWithin.
	Live campaign.Liveness
}

// liveRunners counts each campaign's live runners by the one rule
// (campaign.Liveness) that status, list and show share.
func (r Reporter) liveRunners(ctx context.Context) (map[int64]int, error) {
	l := r.Live
	if l.Stale <= 0 {
		l.Stale = LiveWithin
	}
	return r.Reads.LiveRunners(ctx, l, r.Now)
}

// Status reads accounts, the global limit and every campaign.
func (r Reporter) Status(ctx context.Context) (Status, error) {
	camps, err := r.Campaigns(ctx)
	if err != nil {
		return Status{}, err
	}
	accts, err := r.AccountsHealth(ctx, camps)
	if err != nil {
		return Status{}, err
	}
	if err := r.addAccountDelivery(ctx, accts); err != nil {
		return Status{}, err
	}
	ports, err := r.Src.Portfolios(ctx)
	if err != nil {
		return Status{}, err
	}
	out := Status{Database: r.Src.Path(), Accounts: accts, Campaigns: camps, Portfolios: Portfolios(ports),
		QuotaResetOverdue: quotaResetOverdue(accts, r.Now, r.Loc)}
	gl, tokens, on, err := r.Reads.GlobalLimit(ctx)
	if err != nil {
		return Status{}, err
	}
	if on {
		out.GlobalLimit = &Global{Rate: gl.Rate, Burst: gl.Burst, Tokens: tokens}
	}
	if out.Runners, err = r.runners(ctx); err != nil {
		return Status{}, err
	}
	return out, nil
}

// EffectiveRate is the rate in force: the configured one scaled down after
// throttling.
func EffectiveRate(a campaign.AccountStatus) float64 {
	if a.RateFactor <= 0 {
		return a.Limits.Rate
	}
	return a.Limits.Rate * a.RateFactor
}

// AccountState is what an account is doing: disabled, restricted or
// cooling down until a time, capped, waiting (for a token, while a
// campaign waits on it), else ok. sending says whether a campaign is being
// sent now: without one, an account with no token waits for nobody.
func AccountState(a campaign.AccountStatus, loc *time.Location, sending bool) string {
	switch {
	case a.Disabled:
		return "disabled"
	case a.Check.Failed():
		return "failed its check"
	case a.CooldownUntil.After(a.At) && a.Restriction != "":
		return "restricted until " + a.CooldownUntil.In(loc).Format("01-02 15:04")
	case a.CooldownUntil.After(a.At):
		return "cooling down until " + a.CooldownUntil.In(loc).Format("15:04:05")
	case a.UsedToday >= a.Limits.DailyCap:
		return "capped until reset"
	case a.Tokens < 1 && sending:
		return "waiting"
	}
	return "ok"
}

// Accounts are the accounts' settings and states. sending says whether a
// campaign is being sent now (see AccountState).
func Accounts(accts []campaign.AccountStatus, loc *time.Location, sending bool) []Account {
	out := make([]Account, 0, len(accts))
	for _, a := range accts {
		out = append(out, Account{
			Name: a.Name, PhoneNumberID: a.PhoneNumberID, Tier: a.Tier, TokenEnv: a.TokenEnv,
			Rate: a.Limits.Rate, Burst: a.Limits.Burst, DailyCap: a.Limits.DailyCap,
			Tokens: math.Floor(a.Tokens*1000) / 1000, SentToday: a.UsedToday, QuotaDay: a.QuotaDay,
			State: AccountState(a, loc, sending), Disabled: a.Disabled, EffectiveRate: EffectiveRate(a), LastErrorCode: LastErrorCode(a),
			Portfolio: a.Portfolio, WABA: a.WABA, Throughput: a.Throughput, ThroughputSource: ThroughputSource(a),
			API: string(a.API),
		})
		if !a.Synced.At.IsZero() {
			at := a.Synced.At.UTC()
			j := &out[len(out)-1]
			j.QualityRating, j.SyncedAt = a.Synced.QualityRating, &at
			if a.Synced.MessagingLimit != 0 {
				j.MessagingLimit = FormatLimit(a.Synced.MessagingLimit)
			}
		}
		if a.Check.Failed() {
			out[len(out)-1].CheckFailed = &CheckFailed{Code: a.Check.Code, Error: a.Check.Error, At: a.Check.At.UTC()}
		}
		if a.CooldownUntil.After(a.At) {
			t := a.CooldownUntil.UTC()
			out[len(out)-1].CooldownUntil = &t
			out[len(out)-1].Restriction = a.Restriction
		}
	}
	return out
}

// Sending reports whether any of camps is being sent by a live process.
func Sending(camps []Campaign) bool {
	return slices.ContainsFunc(camps, func(c Campaign) bool {
		return c.State == StateRunning || c.State == StateWaitQuota || c.State == StateWaitAPI || c.State == StateWaitLimits
	})
}

// TierProgress is how far an auto-tier account is on its way to the next
// tier (warm-up).
type TierProgress struct {
	Next           string  `json:"next,omitempty"` // "" at the top tier
	DaysInTier     float64 `json:"days_in_tier"`
	DaysNeeded     float64 `json:"days_needed"`
	FullDays       int     `json:"full_days"` // days with the tier's cap sent
	FullDaysNeeded int     `json:"full_days_needed"`
	FailShare      float64 `json:"permanent_failure_share"`
	Restricted     bool    `json:"restricted"`
	Ready          bool    `json:"ready"` // promoted at the next quota reset
	Text           string  `json:"text"`
}

func tierProgress(p campaign.TierProgress) *TierProgress {
	out := &TierProgress{Next: p.Next, DaysInTier: p.InTier.Hours() / 24, DaysNeeded: p.PromoteAfter.Hours() / 24,
		FullDays: p.FullDays, FullDaysNeeded: campaign.FullDays, FailShare: p.FailShare, Restricted: p.Restricted, Ready: p.Ready}
	switch {
	case p.Next == "":
		out.Text = p.Tier + " is the top tier"
	case p.Ready:
		out.Text = "ready for " + p.Next + " at the next quota reset"
	default:
		out.Text = "to " + p.Next + ": " + p.Why
	}
	return out
}

// AccountsHealth is each account with its figures over the last hour, the
// last 24 h and overall; camps (as Campaigns returns them) tell whether
// work waits on the accounts.
func (r Reporter) AccountsHealth(ctx context.Context, camps []Campaign) ([]AccountStatus, error) {
	accts, err := r.Src.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	hour, err := r.Reads.AccountActivity(ctx, r.Now.Add(-time.Hour))
	if err != nil {
		return nil, err
	}
	day, err := r.Reads.AccountActivity(ctx, r.Now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	all, err := r.Reads.AccountActivity(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	progress, err := r.Reads.TierProgress(ctx)
	if err != nil {
		return nil, err
	}
	sending := Sending(camps)
	waiting := slices.ContainsFunc(camps, func(c Campaign) bool { return c.State == StateRunning && c.Pending > 0 })
	base := Accounts(accts, r.Loc, sending)
	out := make([]AccountStatus, len(accts))
	for i, a := range accts {
		rate := EffectiveRate(a)
		out[i] = AccountStatus{
			Account:  base[i],
			Sent24h:  day[a.Name].Sent,
			LastHour: HealthOf(hour[a.Name], rate, a.Limits.Burst, waiting),
			Overall:  HealthOf(all[a.Name], rate, a.Limits.Burst, waiting),
		}
		if p, ok := progress[a.Name]; ok {
			out[i].TierProgress = tierProgress(p)
		}
	}
	return out, nil
}

// HealthOf is an account's health from its activity, its rate and burst;
// utilisation counts only while work waits.
func HealthOf(a readmodel.Activity, rate float64, burst int, workWaiting bool) Health {
	h := Health{Attempts: a.Attempts, ThrottleRate: a.ThrottleRate(), AvgAttempts: a.AvgAttempts(),
		Utilisation: a.Utilisation(rate, burst)}
	if a.Attempts == 0 {
		return h
	}
	if h.ThrottleRate >= MaxThrottleRate {
		h.Unhealthy = append(h.Unhealthy, "throttle_rate")
	}
	if h.AvgAttempts >= MaxAvgAttempts {
		h.Unhealthy = append(h.Unhealthy, "avg_attempts")
	}
	if workWaiting && (h.Utilisation < MinUtilisation || h.Utilisation > MaxUtilisation) {
		h.Unhealthy = append(h.Unhealthy, "utilisation")
	}
	return h
}

// CampaignState is a campaign's true state: running only while a live
// process sends it (waiting for quota when every usable account is
// capped), ready when imported and never started, interrupted when
// started and no process sends it; paused, finished (and any other stored
// state) as stored.
func CampaignState(c campaign.Campaign, live bool, started bool, accts []campaign.AccountStatus, dropped []readmodel.Dropped) string {
	if c.State != campaign.CampaignRunning {
		return string(c.State)
	}
	switch {
	case live && allCapped(accts, dropped):
		return StateWaitQuota
	case live:
		return StateRunning
	case started:
		return StateInterrupted
	}
	return StateReady
}

// State is one campaign's true state (see CampaignState), read at the
// reporter's instant; started says whether any request was made for it.
func (r Reporter) State(ctx context.Context, c campaign.Campaign, started bool, dropped []readmodel.Dropped) (string, error) {
	if c.State != campaign.CampaignRunning {
		return string(c.State), nil
	}
	live, err := r.liveRunners(ctx)
	if err != nil {
		return "", err
	}
	accts, err := r.Src.Accounts(ctx)
	if err != nil {
		return "", err
	}
	state := scheduled(c, r.Now, CampaignState(c, live[c.ID] > 0, started, accts, dropped))
	if state == StateInterrupted {
		q, err := r.Reads.CampaignQueue(ctx, c.ID)
		if err != nil {
			return "", err
		}
		state = retryLater(state, q, r.Now)
	}
	if state != StateRunning {
		return state, nil
	}
	// What its live process waits out, as Campaigns says it.
	outage, err := r.Reads.Outage(ctx, c.ID)
	if err != nil {
		return "", err
	}
	if !outage.Since.IsZero() {
		return StateWaitAPI, nil
	}
	lw, err := r.Reads.LimitsWait(ctx, c.ID)
	if err != nil {
		return "", err
	}
	if !lw.Since.IsZero() && live[c.ID] > 0 && r.Now.Sub(lw.Seen) < LiveWithin {
		return StateWaitLimits, nil
	}
	return state, nil
}

// StateOf is one campaign's true state (State), reading whether it started
// and its dropped accounts itself: for a caller that has only the campaign
// (shell completion).
func (r Reporter) StateOf(ctx context.Context, c campaign.Campaign) (string, error) {
	if c.State != campaign.CampaignRunning {
		return string(c.State), nil
	}
	q, err := r.Reads.CampaignQueue(ctx, c.ID)
	if err != nil {
		return "", err
	}
	dropped, err := r.Reads.DroppedAccounts(ctx, c.ID)
	if err != nil {
		return "", err
	}
	return r.State(ctx, c, !q.Started.IsZero(), dropped)
}

// retryLater turns interrupted into StateRetryLater when nothing can go
// before a retry time: the run ended for now, nothing was cut short.
func retryLater(state string, q readmodel.Queue, now time.Time) string {
	if state == StateInterrupted && q.Ready == 0 && q.InFlight == 0 && q.NextDue.After(now) {
		return StateRetryLater
	}
	return state
}

// scheduled is a campaign's state while its start is ahead: scheduled,
// whether or not a process waits for it.
func scheduled(c campaign.Campaign, now time.Time, state string) string {
	if c.Scheduled(now) && (state == StateRunning || state == StateReady || state == StateInterrupted) {
		return StateScheduled
	}
	return state
}

func allCapped(accts []campaign.AccountStatus, dropped []readmodel.Dropped) bool {
	usable := 0
	for _, a := range accts {
		if a.Disabled || slices.ContainsFunc(dropped, func(d readmodel.Dropped) bool { return d.Account == a.Name }) {
			continue
		}
		usable++
		if a.UsedToday < a.Limits.DailyCap {
			return false
		}
	}
	return usable > 0
}

// Campaigns reads every campaign with its true state, counts, health and
// ETA.
func (r Reporter) Campaigns(ctx context.Context) ([]Campaign, error) {
	camps, err := r.Reads.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	accts, err := r.Src.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	live, err := r.liveRunners(ctx)
	if err != nil {
		return nil, err
	}
	eta, err := r.etaFunc(ctx, accts)
	if err != nil {
		return nil, err
	}
	limits := map[string]campaign.AccountStatus{}
	for _, a := range accts {
		limits[a.Name] = a
	}
	out := []Campaign{}
	for _, c := range camps {
		n, err := r.Src.Counts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		stats, err := r.Reads.CampaignStats(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		dropped, err := r.Reads.DroppedAccounts(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		q, err := r.Reads.CampaignQueue(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		cj := newCampaign(c, n)
		if cj.StickyBroken, err = r.Reads.StickyBreaks(ctx, c.ID); err != nil {
			return nil, err
		}
		cj.State = scheduled(c, r.Now, CampaignState(c, live[c.ID] > 0, !q.Started.IsZero(), accts, dropped))
		cj.Ready, cj.WaitingRetry, cj.WaitingWindow = q.Ready, q.Waiting, q.WindowWait
		if !q.Started.IsZero() {
			t := q.Started.UTC()
			cj.StartedAt = &t
		}
		cj.ThrottleRate, cj.ThrottleRateHour, cj.AvgAttempts = stats.ThrottleRate(), stats.HourThrottleRate(), stats.AvgAttempts()
		for _, d := range dropped {
			cj.DroppedAccounts = append(cj.DroppedAccounts, Dropped{Account: d.Account, Reason: d.Reason, ErrorCode: d.ErrorCode, At: d.At.UTC()})
		}
		cj.State = retryLater(cj.State, q, r.Now)
		if cj.ETA, err = eta(ctx, c, n, q, dropped); err != nil {
			return nil, err
		}
		outage, err := r.Reads.Outage(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		if !outage.Since.IsZero() {
			cj.Outage = &Outage{Since: outage.Since.UTC(), Error: outage.Error, NextProbe: outage.NextProbe.UTC()}
			if cj.State == StateRunning {
				cj.State = StateWaitAPI
			}
		}
		if cj.LimitsWait, err = r.limitsWait(ctx, c.ID, live[c.ID] > 0); err != nil {
			return nil, err
		}
		if cj.LimitsWait != nil {
			if cj.State == StateRunning {
				cj.State = StateWaitLimits
			}
			cj.ETA = cj.ETA.waitingFor(cj.LimitsWait)
		}
		working := cj.State == StateRunning && q.Ready > 0
		hour := readmodel.Activity{Attempts: stats.HourAttempts, Throttled: stats.HourThrottled, Messages: stats.HourMessages}
		all := readmodel.Activity{Attempts: stats.Attempts, Throttled: stats.Throttled, Messages: stats.MessagesAttempted}
		hourSince := r.Now.Add(-time.Hour)
		// A finished campaign's figures stop with it: its last hour is the
		// last hour of its sending, and token use counts each account's
		// configured rate, not one that recovers or drops afterwards.
		frozen := c.State == campaign.CampaignFinished && !c.FinishedAt.IsZero()
		if frozen {
			hourSince = c.FinishedAt.Add(-time.Hour)
			if hour, err = r.activitySince(ctx, c.ID, hourSince); err != nil {
				return nil, err
			}
			cj.ThrottleRateHour = hour.ThrottleRate()
		}
		if cj.LastHour, err = r.campaignHealth(ctx, c.ID, hourSince, hour, limits, working, frozen); err != nil {
			return nil, err
		}
		if cj.Overall, err = r.campaignHealth(ctx, c.ID, time.Time{}, all, limits, working, frozen); err != nil {
			return nil, err
		}
		if cj.Delivery, err = r.Delivery(ctx, c.ID, UnknownGrace); err != nil {
			return nil, err
		}
		if d := cj.Delivery; d != nil {
			cj.Held, cj.HeldStop = d.Held, d.HeldStop
			cj.Sent -= d.Held
		}
		out = append(out, cj)
	}
	return out, nil
}

func newCampaign(c campaign.Campaign, n campaign.Counts) Campaign {
	out := Campaign{
		ID: c.ID, Name: c.Name, State: string(c.State), PauseReason: c.PauseReason, Source: c.Source,
		Total: n.Total(), Sent: n[campaign.Sent], Pending: n[campaign.Pending], Sending: n[campaign.Sending],
		Failed: n[campaign.Failed], Unknown: n[campaign.Unknown], Expired: n[campaign.Expired],
		Skipped: c.Skipped, CreatedAt: c.CreatedAt.UTC(),
		StartAt: utcOrNil(c.Schedule.StartAt), ExpiresAt: utcOrNil(c.ExpiresAt()),
		Priority: c.Share.Priority.String(), Weight: c.Share.Weight,
	}
	if w := c.Schedule.Window; w != nil {
		out.SendWindow = w.String()
	}
	if !c.FinishedAt.IsZero() {
		t := c.FinishedAt.UTC()
		out.FinishedAt = &t
	}
	return out
}

// campaignHealth is a campaign's health since a time: throttled share and
// attempts per message from its requests, and tokens used out of those its
// accounts earned while sending it.
func (r Reporter) campaignHealth(ctx context.Context, id int64, since time.Time, req readmodel.Activity,
	accts map[string]campaign.AccountStatus, working, frozen bool) (Health, error) {
	act, err := r.Reads.Activity(ctx, since, id)
	if err != nil {
		return Health{}, err
	}
	var avail float64
	for name, a := range act {
		if acct, ok := accts[name]; ok && a.Attempts > 0 {
			rate := EffectiveRate(acct)
			if frozen {
				rate = acct.Limits.Rate
			}
			avail += a.Available(rate, acct.Limits.Burst)
		}
	}
	h := HealthOf(req, 0, 1, false)
	h.Utilisation = 0
	if avail > 0 {
		h.Utilisation = min(float64(req.Attempts)/avail, 1)
	}
	if working && req.Attempts > 0 && h.Utilisation < MinUtilisation {
		h.Unhealthy = append(h.Unhealthy, "utilisation")
	}
	return h, nil
}

// activitySince sums a campaign's requests since a time over its
// accounts. A message tried on two accounts counts on each.
func (r Reporter) activitySince(ctx context.Context, id int64, since time.Time) (readmodel.Activity, error) {
	act, err := r.Reads.Activity(ctx, since, id)
	if err != nil {
		return readmodel.Activity{}, err
	}
	var sum readmodel.Activity
	for _, a := range act {
		sum.Attempts += a.Attempts
		sum.Throttled += a.Throttled
		sum.Messages += a.Messages
		sum.Sent += a.Sent
	}
	return sum, nil
}

// HumanDuration rounds a forecast for people: "about 2 d 4 h".
func HumanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "at once"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("about %d min", int(d/time.Minute))
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("about %d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("about %d d %d h", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ThroughputSource says where an account's throughput comes from:
// pinned (account set --throughput), meta (read) or default.
func ThroughputSource(a campaign.AccountStatus) string {
	switch {
	case a.ThroughputPinned != 0:
		return "pinned"
	case a.ThroughputRead > 0:
		return "meta"
	}
	return "default"
}

// FormatLimit shows a messaging limit: a number, unlimited or none.
func FormatLimit(n int) string {
	switch {
	case n == campaign.Unlimited:
		return "unlimited"
	case n <= 0:
		return "none"
	}
	return strconv.Itoa(n)
}

// ReachStates are the portfolios' windows as the planner starts from them.
func ReachStates(ws []readmodel.PortfolioWindow) []planner.PortfolioState {
	out := make([]planner.PortfolioState, 0, len(ws))
	for _, w := range ws {
		out = append(out, planner.PortfolioState{Name: w.Name, Reach: w.Reach, Accounts: w.Accounts, Latest: w.Latest})
	}
	return out
}

// Portfolio is the stable JSON shape of a portfolio (`status --json`,
// `portfolio list --json`).
type Portfolio struct {
	Name        string     `json:"name"`
	Own         bool       `json:"own"`
	Accounts    []string   `json:"accounts"`
	PinnedLimit *int       `json:"pinned_limit"`
	ReadLimit   *string    `json:"read_limit"`
	ReadFrom    string     `json:"read_from,omitempty"`
	ReadAt      *time.Time `json:"read_at,omitempty"`
	Limit       *int       `json:"limit"`
	Allowed     *int       `json:"allowed"`
	Margin      float64    `json:"margin"`
	Used24h     int        `json:"used_24h"`
	Full        bool       `json:"full"`
	FreesAt     *time.Time `json:"frees_at,omitempty"`
}

// Portfolios turns the store's portfolios into their JSON shape.
func Portfolios(ps []campaign.PortfolioStatus) []Portfolio {
	out := make([]Portfolio, 0, len(ps))
	for _, p := range ps {
		j := Portfolio{Name: p.Name, Own: p.Own, Accounts: p.Accounts, Margin: p.Margin, Used24h: p.Used}
		if j.Accounts == nil {
			j.Accounts = []string{}
		}
		if p.PinnedLimit > 0 {
			j.PinnedLimit = &p.PinnedLimit
		}
		if p.ReadLimit != 0 {
			s := FormatLimit(p.ReadLimit)
			j.ReadLimit, j.ReadFrom = &s, p.ReadFrom
			at := p.ReadAt.UTC()
			j.ReadAt = &at
		}
		if p.Limit > 0 {
			j.Limit, j.Allowed = &p.Limit, &p.Allowed
			j.Full = p.Used >= p.Allowed
			if j.Full && !p.FreesAt.IsZero() {
				at := p.FreesAt.UTC()
				j.FreesAt = &at
			}
		}
		out = append(out, j)
	}
	return out
}

func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
