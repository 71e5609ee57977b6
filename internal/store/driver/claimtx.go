package driver

import (
	"context"
	"slices"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/ratelimit"
)

// ClaimTx is the claim's transaction as the store executes it: the reads
// and writes a claim makes, each plain SQL that decides nothing. Which rows
// go, from which number, what a refusal means and how long to wait are
// internal/claim's, which runs over this interface; a second driver
// implements the same operations and passes the same suite.
type ClaimTx interface {
	// The campaign: whether it may send, its schedule and its share of
	// the accounts.

	// Stopped is ErrPaused, ErrCancelled or ErrNotFound, nil when the
	// campaign may send.
	Stopped(ctx context.Context, id int64) error
	Schedule(ctx context.Context, id int64) (ClaimSchedule, error)
	// Begin records the campaign's start at now and its deadline.
	Begin(ctx context.Context, id int64, now, expires time.Time) error
	// ExpirePending ends every pending row. Like FailSuppressed past its
	// bound, it makes a sending transaction run again as an ordinary
	// write (see writeSend): the claim passes its error through.
	ExpirePending(ctx context.Context, id int64, why string, now time.Time) error
	FinishCampaign(ctx context.Context, id int64, now time.Time) error
	PauseNoAccount(ctx context.Context, id int64) error
	// Turn is the campaign's share and the campaigns competing with it at
	// now: running, started, not idle, with a runner that beat since live
	// and rows due.
	Turn(ctx context.Context, id int64, now, live time.Time) (ClaimTurn, error)
	SetServed(ctx context.Context, id int64, served float64) error
	// Idle marks the campaign idle until at least until; the zero time
	// ends its idleness.
	Idle(ctx context.Context, id int64, until time.Time) error
	PairGap(ctx context.Context, id int64) (time.Duration, error)
	// RepeatGuard names the campaign's message for the repeat guard.
	RepeatGuard(ctx context.Context, id int64) (string, error)
	CountStickyBreaks(ctx context.Context, id int64, breaks map[string]int) error

	// The campaign's rows.

	// Due is up to max pending rows due at now, oldest first, each with
	// the suppression list's reason when its number is listed.
	Due(ctx context.Context, id int64, now time.Time, max int) ([]DueRow, error)
	// FirstPending is when the next pending row is due and why it was put
	// off, and how many rows are in flight.
	FirstPending(ctx context.Context, id int64) (FirstPending, error)
	// NextPutOff is the earliest pending row due after now that is not
	// held for the reach or a cap (zero: none).
	NextPutOff(ctx context.Context, id int64, now time.Time) (time.Time, error)
	// Zones are the rows' time zones (invalid: imported without) and
	// whether each waits for its send window.
	Zones(ctx context.Context, ids []int64) (map[int64]RowZones, error)
	PutOff(ctx context.Context, id int64, until time.Time, why PutOff) error
	// ReleaseWindow clears the window's hold of rows whose window opened.
	ReleaseWindow(ctx context.Context, ids []int64) error
	// FailSuppressed fails a row whose number is listed (past a bound of
	// such rows, as ExpirePending).
	FailSuppressed(ctx context.Context, id int64, why string, now time.Time) error
	FailNeverOpen(ctx context.Context, id int64, why string, now time.Time) error
	// ServiceWindow: the campaign's rows need an open customer service
	// window (a text campaign without --ignore-window); LastInbound is when
	// each of keys last wrote to each number, links followed (absent:
	// never); SkipNoWindow fails a row without one (bounded as FailSuppressed).
	ServiceWindow(ctx context.Context, id int64) (bool, error)
	LastInbound(ctx context.Context, keys []string) (map[string]campaign.Wrote, error)
	SkipNoWindow(ctx context.Context, id int64, why string, now time.Time) error
	SkipElsewhere(ctx context.Context, id int64, why string, now time.Time) error
	// Take marks the claimed rows sending for runner and logs their
	// attempts, filling in each claim's attempt id; an attempt is
	// inserted started when its claim is (Claim.Started).
	Take(ctx context.Context, runner string, now time.Time, cs []campaign.Claim) ([]campaign.Claim, error)

	// Accounts, buckets, caps and the send log.

	// Accounts are the enabled accounts not dropped from the campaign,
	// and how many accounts are enabled at all.
	Accounts(ctx context.Context, campaignID int64) (accts []ClaimAccount, enabled int, err error)
	Global(ctx context.Context) (GlobalBucket, error)
	SpendTokens(ctx context.Context, accountID int64, b ratelimit.Bucket, used int) error
	SpendGlobal(ctx context.Context, b ratelimit.Bucket) error
	// CountSends adds n to the account's count of the day.
	CountSends(ctx context.Context, accountID int64, n int) error
	// ReachLimit is the messaging limit of a's portfolio that applies
	// (0: none); Members are the ids of every account of the portfolio,
	// removed and disabled ones too.
	ReachLimit(ctx context.Context, a ClaimAccount) (int, error)
	Members(ctx context.Context, portfolioID int64) ([]int64, error)
	// ReachCount is how many distinct recipients the scope's accounts
	// messaged after since, its running count moved to since; ReachOldest
	// the oldest of their latest sends then.
	ReachCount(ctx context.Context, s ReachScope, since time.Time) (int, error)
	// KeepReach moves the count to since as ReachCount does, for a claim
	// that does not read it.
	KeepReach(ctx context.Context, s ReachScope, since time.Time) error
	ReachOldest(ctx context.Context, members []int64, since time.Time) (time.Time, error)
	LastContacts(ctx context.Context, phones []string) (map[string]LastContact, error)
	// LogContacts writes the send log for the claims Take made (it names
	// their attempts: claimsql.LogClaims).
	LogContacts(ctx context.Context, cs []campaign.Claim) error
	// Fate is what became of an account the claim does not offer: by id,
	// or (id 0) by phone number id, the newest live one first.
	Fate(ctx context.Context, campaignID, accountID int64, phoneNumberID string) (AccountFate, error)

	// Shared limits (--limits).

	// Shared is what ShareLimits configured; nil without.
	Shared() *SharedLimits
	Today(t time.Time) string
	NoteGateWait(ctx context.Context, id int64, now time.Time, reason campaign.WaitReason, detail string) error
	ClearGateWait(ctx context.Context, id int64) error
	QueuedRefunds(ctx context.Context, max int) ([]campaign.SharedClaim, error)
	ForgetRefund(ctx context.Context, claim string) error
	// HostPart is this database's part of a portfolio's lost day.
	HostPart(ctx context.Context, host, portfolio, today string, now time.Time) (limits.RebuildRequest, error)
}

// ClaimSchedule is a campaign's schedule as the claim reads it.
type ClaimSchedule struct {
	StartAt, BeganAt, ExpiresAt time.Time // zero: none
	ExpireAfter                 time.Duration
	Window                      *campaign.Window
}

// ClaimTurn is a campaign's share of the accounts and its competitors'.
type ClaimTurn struct {
	Share  campaign.Share
	Served float64
	Idle   bool
	Others []Competitor
}

// Competitor is another campaign competing for the accounts.
type Competitor struct {
	Priority campaign.Priority
	Served   float64
	Weight   int
	// Excluded are the accounts it may not send from (campaign_accounts):
	// their tokens are not its to claim.
	Excluded []int64
}

// Uses reports whether the competitor may send from one of accounts.
func (o Competitor) Uses(accounts []int64) bool {
	for _, a := range accounts {
		if !slices.Contains(o.Excluded, a) {
			return true
		}
	}
	return false
}

// DueRow is a pending row with the suppression list's word on it.
type DueRow struct {
	campaign.Message
	Suppressed bool
	Why        string // the list's reason, when Suppressed
}

// FirstPending is what a claim that found no due row reads.
type FirstPending struct {
	Next    time.Time // the first pending row's due time; zero: none
	Why     PutOff    // why it was put off
	Sending int
}

// RowZones is a row's time zones and its window hold.
type RowZones struct {
	Zones   string // "": imported without a send window
	Waiting bool
}

// ClaimAccount is an account as the claim decides on it.
type ClaimAccount struct {
	campaign.AccountStatus
	Health ratelimit.Health
	// The portfolio's settings (PortfolioID 0: a portfolio of its own).
	PortfolioID int64
	PinnedLimit int
	Margin      float64
}

// Limit is the account's bucket limit at t: its rate scaled by its health.
func (a ClaimAccount) Limit(t time.Time) ratelimit.Limit {
	return a.Health.Scale(ratelimit.Limit{Rate: a.Limits.Rate, Burst: a.Limits.Burst}, t)
}

// Bucket is the account's bucket as stored.
func (a ClaimAccount) Bucket() ratelimit.Bucket { return ratelimit.Bucket{Tokens: a.Tokens, At: a.At} }

// GlobalBucket is the global limit and its bucket.
type GlobalBucket struct {
	On     bool
	Limit  ratelimit.Limit
	Bucket ratelimit.Bucket
}

// LastContact is what the send log knows of a number: the latest request
// to it from any of our accounts, and the account whose message it last
// accepted.
type LastContact struct {
	At      time.Time // zero: none logged
	SentAt  time.Time // zero: none accepted
	Account int64     // that sent at SentAt
	// ByAccount is the latest request from each account, for the windows
	// of the portfolios.
	ByAccount map[int64]time.Time
}

// AccountFate is what became of an account.
type AccountFate struct {
	Found, Disabled, Removed, Dropped bool
}

// SharedLimits is where claims ask for admission under --limits.
type SharedLimits struct {
	Gates Gates
	// Unavailable tells a failure to reach the gates from other errors.
	Unavailable func(error) bool
	Host        string // the database's id among the hosts (setting limits_host)
}

// Gates opens the limits gate of a portfolio: several hosts that send
// from one portfolio's numbers share its buckets, caps and reach through
// it (--limits). Gate is called once per portfolio and claim; an
// implementation caches what it opens.
type Gates interface {
	Gate(portfolio string) (limits.Gate, error)
}

// DefaultPortfolio is the portfolio, in the shared limits, of the accounts
// that belong to none: they share its global bucket. Their messaging limit
// (reach) is their own and not shared; put numbers that several hosts send
// from into a portfolio (`wasend portfolio add`) to share it.
const DefaultPortfolio = "default"

// GateAccount is an account's name in the shared limits: its phone number
// id, which every host that sends from the number knows it by, whatever
// each calls the account.
func GateAccount(phoneNumberID string) string { return phoneNumberID }

// PutOff is why a claim moved a pending row's next_attempt_at, as
// messages.window_wait keeps it (the column was the send window's flag
// first). A claim takes the row with PutOffNone again; a row put off for
// the pair gap or a busy number, and a recorded retry time, are PutOffNone
// too.
type PutOff int

const (
	PutOffNone   PutOff = 0
	PutOffWindow PutOff = 1 // its send window's next opening
	// PutOffReach: every number that could send to the row belongs to a
	// portfolio whose window is full (or is at its daily cap); the row
	// waits until the earliest of those windows makes room, and no claim
	// reads it meanwhile — nor counts it as a row its campaign could send
	// when campaigns take turns.
	PutOffReach PutOff = 2
	// PutOffCap: the row's sticky number is at its daily cap; it is looked
	// at again a little later (a quota reset may come at any time).
	PutOffCap PutOff = 3
)

// ReachScope is whose sends count towards one portfolio's reach: a
// portfolio's (Portfolio, every account of it) or an account's without one
// (Portfolio 0, Account, itself alone). Its key names its running count.
type ReachScope struct {
	Portfolio int64
	Account   int64
	Members   []int64
}

// ScopeOf is the scope of an account's portfolio with its members.
func ScopeOf(accountID, portfolioID int64, members []int64) ReachScope {
	if portfolioID != 0 {
		return ReachScope{Portfolio: portfolioID, Members: members}
	}
	return ReachScope{Account: accountID, Members: members}
}
