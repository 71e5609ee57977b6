// Package campaign holds wasend's domain types: tiers, accounts, campaigns,
// messages and the states a message moves through. It depends on the
// standard library only; every other package speaks in these types.
package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// State is where one recipient of a campaign stands. A message only moves
// forward: pending → sending → sent | failed | unknown, or pending → expired. The one way back is
// an explicit operator decision (retry), or a throttling answer that proves
// the request was not accepted (sending → pending). Transitions
// (transitions.go) is the whole table of legal moves.
type State string

const (
	// Pending rows wait to be claimed, possibly not before NextAttemptAt.
	Pending State = "pending"
	// Sending rows were claimed by a runner; the request may be in flight.
	Sending State = "sending"
	// Sent rows were accepted by the Cloud API and carry a wamid.
	Sent State = "sent"
	// Failed rows got an answer that says they can never succeed as they are.
	Failed State = "failed"
	// Unknown rows may or may not have reached the API: their runner died,
	// or the connection dropped after the request was written. They are never
	// resent automatically because the Cloud API has no idempotency key.
	Unknown State = "unknown"
	// Expired rows were still pending when the campaign's validity
	// (Schedule.ExpireAfter) ran out: they are never sent.
	Expired State = "expired"
)

// States lists every message state in display order.
var States = []State{Pending, Sending, Sent, Failed, Unknown, Expired}

// CampaignState is the life cycle of a whole campaign.
type CampaignState string

const (
	CampaignRunning  CampaignState = "running"
	CampaignPaused   CampaignState = "paused"
	CampaignFinished CampaignState = "finished"
	// CampaignCancelled is final: the operator stopped the campaign for
	// good; its pending rows are never sent and its counts are kept.
	CampaignCancelled CampaignState = "cancelled"
)

// Tier is a class of sending number with its default limits.
type Tier struct {
	Name     string
	Limits   Limits
	Defaults Limits // built-in values, for display
}

// Limits are the pacing settings of one account or tier.
type Limits struct {
	Rate     float64 // tokens per second
	Burst    int     // bucket capacity
	DailyCap int     // messages per quota day
}

// Validate reports settings that cannot work.
func (l Limits) Validate() error {
	switch {
	case !(l.Rate > 0) || l.Rate > 1e9:
		return fmt.Errorf("rate %v: must be a positive number of messages per second", l.Rate)
	case l.Burst < 1:
		return fmt.Errorf("burst %d: must be at least 1", l.Burst)
	case l.DailyCap < 0:
		return fmt.Errorf("daily cap %d: must not be negative", l.DailyCap)
	}
	return nil
}

// Tier names.
const (
	TierNew    = "new"
	TierWarm   = "warm"
	TierActive = "active"
)

// DefaultTiers are the built-in tier settings.
var DefaultTiers = map[string]Limits{
	TierNew:    {Rate: 1.0 / 12, Burst: 5, DailyCap: 50},
	TierWarm:   {Rate: 1.0 / 8, Burst: 8, DailyCap: 150},
	TierActive: {Rate: 1.0 / 5, Burst: 15, DailyCap: 300},
}

// TierNames lists the tiers from slowest to fastest.
var TierNames = []string{TierNew, TierWarm, TierActive}

// ValidTier reports whether name is a known tier.
func ValidTier(name string) bool {
	_, ok := DefaultTiers[name]
	return ok
}

// Overrides are per-account settings that win over the account's tier.
// A nil field means "use the tier's value".
type Overrides struct {
	Rate     *float64
	Burst    *int
	DailyCap *int
}

// Apply returns tier limits with the overrides laid over them.
func (o Overrides) Apply(l Limits) Limits {
	if o.Rate != nil {
		l.Rate = *o.Rate
	}
	if o.Burst != nil {
		l.Burst = *o.Burst
	}
	if o.DailyCap != nil {
		l.DailyCap = *o.DailyCap
	}
	return l
}

// Account is one WhatsApp business phone number that wasend sends from.
// The access token is never part of it: TokenEnv names the environment
// variable that holds the token.
type Account struct {
	ID            int64
	Name          string
	PhoneNumberID string
	Tier          string
	TokenEnv      string
	Overrides     Overrides
	Disabled      bool
	CreatedAt     time.Time
	// Portfolio is the name of the account's business portfolio, "" when
	// it is a portfolio of its own.
	Portfolio string
	// WABA is the id of the WhatsApp Business Account the number belongs
	// to (account add|set --waba-id), "" when not given.
	WABA string
	// ThroughputPinned is the operator's throughput in messages per second
	// (account set --throughput), which wins over what Meta said: 0 for
	// none, Unlimited for no limit.
	ThroughputPinned float64
	// ManualTier keeps the tier by hand; without it (the default for new
	// accounts) warm-up promotes and demotes the account (AssessTier).
	ManualTier bool
	// API is the account's endpoint when a run gives no --api (account
	// set --api): "" is APICloud.
	API API
}

// AccountStatus is an account with its live limiter state.
type AccountStatus struct {
	Account
	Limits Limits    // effective limits (tier + overrides)
	Tokens float64   // tokens available at At
	At     time.Time // when the status was read
	// Health: RateFactor scales the configured rate after throttling
	// (1 = full rate); the account rests until CooldownUntil, for
	// Restriction when that is set.
	RateFactor    float64
	CooldownUntil time.Time
	Restriction   string
	LastErrorCode int
	QuotaDay      string // calendar day of the last quota reset
	// QuotaEpoch counts quota resets; a refund only applies within the epoch
	// that counted the send.
	QuotaEpoch int64
	UsedToday  int
	// Throughput is the number's limit in messages per second, which Limits
	// never exceed (0: unlimited): ThroughputPinned when set, else
	// ThroughputRead (from the Graph API, 0 when never read), else
	// DefaultThroughput.
	Throughput     float64
	ThroughputRead float64
	// Synced is what the Graph API last said of the number.
	Synced NumberInfo
	// Check is the last check's finding (a run's preflight, `account
	// test`) while it failed; zero once one passes.
	Check CheckFinding
}

// CheckFinding is why an account failed its check: the Graph error code
// (0: none, e.g. its token variable is unset), what was wrong, never the
// token, and when.
type CheckFinding struct {
	Code  int
	Error string
	At    time.Time
}

// Failed reports whether the last check failed.
func (f CheckFinding) Failed() bool { return f.Error != "" }

// NumberInfo is what GET /{phone-number-id} says of a business number, as
// wasend keeps it.
type NumberInfo struct {
	QualityRating string // GREEN, YELLOW, RED, UNKNOWN
	// Throughput in messages per second from throughput.level (0: a level
	// wasend does not know).
	Throughput float64
	// MessagingLimit is the portfolio's limit of distinct recipients in
	// 24 h (Unlimited for none; 0: not read).
	MessagingLimit int
	VerifiedName   string
	NameStatus     string
	At             time.Time // zero: never read
}

// DefaultThroughput is a business number's throughput until Meta upgrades
// it (messages per second); UpgradedThroughput is the upgraded one.
const (
	DefaultThroughput  = 80
	UpgradedThroughput = 1000
)

// EffectiveThroughput is the throughput that applies to a number given
// what was pinned and read (0 for either: none); 0 means unlimited.
func EffectiveThroughput(pinned, read float64) float64 {
	switch {
	case pinned == Unlimited:
		return 0
	case pinned > 0:
		return pinned
	case read > 0:
		return read
	}
	return DefaultThroughput
}

// CapThroughput returns l with its rate and burst held to throughput tp
// (0: unlimited): a number sends no faster than Meta lets it, whatever its
// tier says.
func (l Limits) CapThroughput(tp float64) Limits {
	if tp <= 0 {
		return l
	}
	l.Rate = min(l.Rate, tp)
	l.Burst = min(l.Burst, max(1, int(tp)))
	return l
}

// MessageKind says how a campaign's messages are built.
type MessageKind string

const (
	KindTemplate MessageKind = "template"
	KindText     MessageKind = "text"
)

// Spec is what every message of a campaign is made from.
type Spec struct {
	Kind     MessageKind
	Template string   // template name (KindTemplate)
	Lang     string   // template language code (KindTemplate)
	Params   []string // CSV columns that fill body parameters {{1}}, {{2}}, …
	Text     string   // text with {{column}} placeholders (KindText)

	// The template's shape beyond positional body parameters. omitempty
	// keeps the JSON of a spec without them, and so the fingerprint of
	// campaigns created before they existed, unchanged.

	// NamedParams sends the Params columns as named body parameters
	// ({{column}}, templates with parameter_format NAMED).
	NamedParams bool     `json:",omitempty"`
	Header      *Header  `json:",omitempty"` // a header parameter, nil for none
	Buttons     []Button `json:",omitempty"` // URL button parameters
}

// SameMessage reports whether a and b send the same message: the same
// template, language and parameter columns (or the same text). With the
// recipients, this is a campaign's identity; how the file was read is not.
func (a Spec) SameMessage(b Spec) bool {
	if a.Kind != b.Kind || a.Template != b.Template || a.Lang != b.Lang || a.Text != b.Text ||
		a.NamedParams != b.NamedParams || len(a.Params) != len(b.Params) || len(a.Buttons) != len(b.Buttons) {
		return false
	}
	for i := range a.Params {
		if a.Params[i] != b.Params[i] {
			return false
		}
	}
	for i := range a.Buttons {
		if a.Buttons[i] != b.Buttons[i] {
			return false
		}
	}
	if (a.Header == nil) != (b.Header == nil) {
		return false
	}
	return a.Header == nil || *a.Header == *b.Header
}

// HeaderType is the kind of a template's header parameter.
type HeaderType string

const (
	HeaderText     HeaderType = "text"
	HeaderImage    HeaderType = "image"
	HeaderDocument HeaderType = "document"
	HeaderVideo    HeaderType = "video"
)

// Media reports whether the header's value is a media link or id.
func (t HeaderType) Media() bool {
	return t == HeaderImage || t == HeaderDocument || t == HeaderVideo
}

// Header fills a template's header parameter from a column: text, or a
// media link (http:// or https://) or uploaded media id.
type Header struct {
	Type   HeaderType
	Column string
}

// Button fills the parameter of the URL button at Index (0-based, as in the
// template) from a column: the suffix appended to the button's URL.
type Button struct {
	Index  int
	Column string
}

// Campaign is one import of a recipient file with a message spec.
type Campaign struct {
	ID          int64
	Name        string
	Fingerprint string // unique per campaign; campaigns are found again by message and recipients (internal/runner)
	Source      string // file path as given
	Spec        Spec
	State       CampaignState
	PauseReason string
	CreatedAt   time.Time
	FinishedAt  time.Time
	Imported    int // rows stored as messages
	Skipped     int // rows reported and not stored
	Schedule    Schedule
	Share       Share
	// BeganAt is the campaign's start: its first claim at or after
	// Schedule.StartAt. Zero until then.
	BeganAt time.Time
	// Deadline is when rows still pending expire, fixed once (see
	// Schedule.Deadline); zero for never, or until the first claim of a
	// campaign without a StartAt.
	Deadline time.Time
}

// Schedule says when a campaign may send. Its zero value sends at once,
// at any hour, for as long as it takes.
type Schedule struct {
	StartAt time.Time // nothing is claimed before it; zero: at once
	// StartArg is --at as given ("+2h"): given again, as a re-run of the
	// same command gives it, it keeps the start it set ("" when not known).
	StartArg string
	// ExpireAfter: rows not sent this long after the campaign's start
	// (StartAt, else its first claim) become Expired (0: never).
	ExpireAfter time.Duration
	// Window, when set, sends each row only while it is open in every
	// time zone of its recipient; a row outside it waits.
	Window *Window
	// DefaultTZ is the zone of recipients whose zone is not known.
	DefaultTZ string
}

// Scheduled reports whether the campaign waits for its start at now.
func (c Campaign) Scheduled(now time.Time) bool {
	return c.State == CampaignRunning && now.Before(c.Schedule.StartAt)
}

// ExpiresAt is when rows still pending expire; zero for never or not yet
// fixed.
func (c Campaign) ExpiresAt() time.Time { return c.Deadline }

// Deadline is when rows still pending expire for a campaign that starts
// at start (StartAt, or its first claim without one): start plus
// ExpireAfter, zero for never or an unknown start. It is computed once,
// when the start is set, and stored: running the same command again does
// not move it.
func (sc Schedule) Deadline(start time.Time) time.Time {
	if sc.ExpireAfter <= 0 || start.IsZero() {
		return time.Time{}
	}
	return start.Add(sc.ExpireAfter)
}

// Contact is a number's latest send: by which campaign, and when.
type Contact struct {
	CampaignID int64
	At         time.Time
}

// Counts are a campaign's messages by state.
type Counts map[State]int

// Total is the number of messages in all states.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Open is the number of messages that still need work.
func (c Counts) Open() int { return c[Pending] + c[Sending] }

// Message is one recipient of a campaign.
type Message struct {
	ID         int64
	CampaignID int64
	Line       int      // line of the CSV record
	Input      string   // phone number as written in the file
	Phone      string   // E.164, with leading +
	Params     []string // template body parameter values, in order
	Body       string   // rendered text (KindText)
	Header     string   // header parameter value (Spec.Header): text, media link or id
	Buttons    []string // URL button parameter values, in the order of Spec.Buttons
	// Zones are the recipient's time zones (comma-separated IANA names)
	// when the campaign has a send window; "" otherwise.
	Zones    string
	State    State
	Attempts int // requests made so far
	Retries  int // transient failures so far: the retry budget spent
	// AccountID is the account that made the last request; 0 before the
	// first.
	AccountID int64
}

// Claim is a message handed to one runner together with the account whose
// token and daily quota it spent. It is the unit of work of the sender.
type Claim struct {
	Message    Message
	Account    Account
	QuotaEpoch int64 // the account's quota epoch that counted this send
	AttemptID  int64 // the ledger's record of this request
	// Fence is the row's claim count after this claim: every write after
	// the claim applies only while the row's is still this (FenceOK).
	Fence int64
	At    time.Time
	// Started: the request was marked started in the claim's own
	// transaction (a claim along that had a place in flight then), so it
	// is made without a Start.
	Started bool
	// Shared is the admission by the limits shared between hosts
	// (--limits); nil when this host keeps its limits itself.
	Shared *SharedClaim
}

// OutcomeKind is what became of one request.
type OutcomeKind int

const (
	// OutcomeSent: accepted by the API, WAMID is set.
	OutcomeSent OutcomeKind = iota + 1
	// OutcomeRetry: provably not accepted; try again not before RetryAt.
	OutcomeRetry
	// OutcomeFailed: rejected for good.
	OutcomeFailed
	// OutcomeUnknown: may have been accepted; never resent automatically.
	OutcomeUnknown
)

// Outcome is the recorded result of sending one claim.
type Outcome struct {
	Kind      OutcomeKind
	WAMID     string
	ErrorCode int
	Error     string // code, title and details, never a secret
	RetryAt   time.Time
	// SpendsRetry is true for a transient failure: it uses up one of the
	// row's retries. Throttling does not.
	SpendsRetry bool
	// Refund is true when the API proved the message was not accepted, so
	// the daily quota it counted is given back (its token stays spent).
	Refund bool
	// Class is the classifier's verdict ("ok", "throttled", …), kept with
	// the attempt for statistics.
	Class string
	// Held: accepted, but the answer's message_status was
	// held_for_quality_assessment (MoveRecordHeld).
	Held bool

	// Effects beyond the row.
	Throttle *Throttle // a throttling answer: the account (or app) rests as it says
	// RateFactor, when > 0, is the share of its configured rate the account
	// sends at from now on: the throttle reaction's verdict
	// (ratelimit.Reaction), carried by whichever answer led to it.
	RateFactor  float64
	Restrict    time.Duration // long restriction (spam limit): stop the account this long
	DropAccount bool          // account-fatal: stop using the account for this campaign
	Pause       string        // pause the campaign with this reason
	Suppress    bool          // the person opted out: never message the number again
}

// Throttle is a throttling answer and the rest the throttle reaction
// decided for it.
type Throttle struct {
	Cooldown time.Duration // the account rests this long; 0: no rest
	Hint     time.Duration // the server's retry hint (a rest of Hint when set)
	// App is set for the app-wide Graph limit (error 4): every account
	// shares the app, so every account rests.
	App bool
	// Upgrade is a number in maintenance while Meta raises its throughput
	// (131057): it rests Cooldown and then sends at its rate again; the
	// throttle reaction does not lower it.
	Upgrade bool
}

// Result is the outcome of one claim and when it was known.
type Result struct {
	Claim   Claim
	Outcome Outcome
	At      time.Time
}

// WaitReason says why no message can be claimed right now.
type WaitReason string

const (
	WaitTokens    WaitReason = "tokens"     // every usable account waits for its bucket
	WaitGlobal    WaitReason = "global"     // the global bucket is empty
	WaitCapped    WaitReason = "capped"     // every usable account reached its daily cap
	WaitRetry     WaitReason = "retry"      // pending rows wait for their retry time
	WaitInFlight  WaitReason = "in-flight"  // only rows in flight remain
	WaitNoAccount WaitReason = "no-account" // no enabled account exists
	WaitScheduled WaitReason = "scheduled"  // the campaign's start (--at) is still ahead
	WaitWindow    WaitReason = "window"     // every pending row waits for its send window
	WaitPriority  WaitReason = "priority"   // another campaign goes first (a higher class, or its turn by weight)
	WaitHeld      WaitReason = "held"       // too many of the campaign's sends are held for quality assessment
)

// WaitError is returned by a claim when nothing can be sent now.
// Until is zero when no time is known (caps: wait for a quota reset).
type WaitError struct {
	Reason WaitReason
	Until  time.Time
	// Detail says more to the user when there is more to say (which
	// portfolio of the shared limits waits, and the command that ends it);
	// it never carries internal ids.
	Detail string
	// Debug is the underlying errors whole (claim ids and all), for the
	// debug log only.
	Debug string
}

func (e *WaitError) Error() string {
	if e.Until.IsZero() {
		return "waiting: " + string(e.Reason)
	}
	return fmt.Sprintf("waiting for %s until %s", e.Reason, e.Until.Format(time.RFC3339))
}

// ErrDone is returned by a claim when the campaign has no open rows left.
var ErrDone = errors.New("campaign has no open messages")

// ErrNotFound is returned when a named record does not exist.
var ErrNotFound = errors.New("not found")

// ErrPaused is returned by a claim when the campaign is paused.
var ErrPaused = errors.New("campaign is paused")

// ErrCancelled is returned by a claim when the operator cancelled the
// campaign. Unlike a pause it is final.
var ErrCancelled = errors.New("campaign was cancelled")

// ErrNoUsableAccount is returned by a claim (wrapped with ErrPaused) when
// every account was dropped from the campaign: it is paused until an
// operator fixes an account and resumes it.
var ErrNoUsableAccount = errors.New("no usable account left for the campaign")

// NoUsableAccountReason is the pause reason that goes with ErrNoUsableAccount.
const NoUsableAccountReason = "every account failed for this campaign (see `wasend status`); fix them, then `wasend campaign resume`"

// CodeSuppressed is the error code of a row failed because its number was
// on the suppression list when it came up for sending. It is wasend's own:
// Graph error codes are never negative. `campaign retry --code -1` selects
// these rows.
const CodeSuppressed = -1

// CodeElsewhere is the error code of a row failed because another host
// sharing the limits (--limits) sent its recipient the same message within
// 24 h, or had it in flight (MoveSkipElsewhere). wasend's own, like
// CodeSuppressed: `campaign retry --code -2` selects these rows.
const CodeElsewhere = -2

// Skip is a row of a recipient file that was not imported.
type Skip struct {
	Line   int
	Input  string
	Reason string
}

// Runner is a sender process registered on a database. Rows it holds in
// state Sending are orphans once it is gone.
type Runner struct {
	ID         string
	CampaignID int64
	Host       string
	PID        int
	// Space is where PID is counted: the machine's boot and the pid
	// namespace (see Liveness); "" when unknown.
	Space       string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// Outage is a Cloud API outage a running campaign waits out: no account
// has had an answer since Since (connection errors, 5xx).
type Outage struct {
	Since     time.Time
	Error     string    // the last error seen
	NextProbe time.Time // when the API is tried again
}

// Portfolio is a Meta business portfolio: its numbers share one messaging
// limit, Meta's count of distinct recipients in any moving 24 h. An account
// without a portfolio is a portfolio of its own.
type Portfolio struct {
	ID   int64
	Name string
	// PinnedLimit is the operator's --limit, 0 for none: the lower of it
	// and the limit read from the Graph API applies.
	PinnedLimit int
	Margin      float64 // the fraction of the limit kept back
	CreatedAt   time.Time
}

// Validate reports settings that cannot work.
func (p Portfolio) Validate() error {
	switch {
	case strings.TrimSpace(p.Name) == "":
		return fmt.Errorf("portfolio name: must not be empty")
	case p.PinnedLimit < 0:
		return fmt.Errorf("portfolio %s: limit %d: must be positive (or none)", p.Name, p.PinnedLimit)
	case !(p.Margin >= 0 && p.Margin < 1):
		return fmt.Errorf("portfolio %s: margin %v: must be at least 0 %% and below 100 %%", p.Name, p.Margin*100)
	}
	return nil
}

// PortfolioStatus is a portfolio with its reach at At.
type PortfolioStatus struct {
	Portfolio
	// Own is set for an account without a portfolio, shown as one; Name
	// is then the account's.
	Own      bool
	Accounts []string
	// Members are the ids of every account whose sends count towards the
	// reach: removed and disabled ones too.
	Members []int64
	// ReadLimit is the limit last read from the Graph API (0: never read,
	// -1: unlimited), from the account ReadFrom at ReadAt.
	ReadLimit int
	ReadFrom  string
	ReadAt    time.Time
	// Limit is the limit that applies (0: none known, nothing enforced);
	// Allowed is it minus the margin.
	Limit   int
	Allowed int
	// Used counts the distinct recipients messaged in the last 24 h;
	// FreesAt is when the oldest of them leaves the window.
	Used    int
	FreesAt time.Time
	At      time.Time
}

// Unlimited is a messaging limit that does not restrict.
const Unlimited = -1

// EffectiveLimit is the messaging limit that applies to a portfolio given
// what was pinned (Portfolio.PinnedLimit) and read from the API: the lower
// of the two, 0 for none (neither given, or Unlimited for either alone).
func EffectiveLimit(pinned, read int) int {
	if read <= 0 {
		return max(pinned, 0)
	}
	if pinned > 0 {
		return min(pinned, read)
	}
	return read
}

// WaitReach is the wait of a claim whose accounts' portfolios have used up
// their messaging limit: Until is when the oldest recipient leaves the 24 h
// window.
const WaitReach WaitReason = "reach"

// ParseLimit reads a messaging limit as Meta names its levels (250, 2k,
// 10k, 100k, unlimited) or as a number; unlimited is Unlimited.
func ParseLimit(s string) (int, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimPrefix(v, "tier_")
	switch v {
	case "unlimited":
		return Unlimited, nil
	case "":
		return 0, fmt.Errorf("messaging limit: empty (250, 2k, 10k, 100k or unlimited)")
	}
	mult := 1
	switch {
	case strings.HasSuffix(v, "k"):
		v, mult = strings.TrimSuffix(v, "k"), 1000
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n <= 0 || n > math.MaxInt32/mult {
		return 0, fmt.Errorf("messaging limit %q: want 250, 2k, 10k, 100k, unlimited or a positive number", s)
	}
	return n * mult, nil
}

// StickyFor is how long a recipient keeps the number that last messaged
// them: people see one sender, and replies land in the right inbox.
const StickyFor = 30 * 24 * time.Hour

// Why a recipient did not get their sticky number.
const (
	StickyDisabled   = "disabled"
	StickyRestricted = "restricted"
	StickyDropped    = "dropped"
	StickyRemoved    = "removed"
)

// DefaultPairGap is how far apart two messages to one person from any of
// our numbers are at least (Meta's pair limit: about one per 6 s, 131056).
const DefaultPairGap = 6 * time.Second

// RepeatGuard names a campaign's message for the repeat guard across hosts
// sharing the limits: its template, as the same-template rule of an import
// reads it, or a digest of its text.
func RepeatGuard(kind MessageKind, template, text string) string {
	if kind == KindTemplate {
		return "t:" + template
	}
	sum := sha256.Sum256([]byte(text))
	return "x:" + hex.EncodeToString(sum[:16])
}
