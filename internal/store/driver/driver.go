// Package driver is the store's seam, as River's riverdriver is River's:
// the Driver interface both stores implement (internal/store on SQLite,
// internal/store/pgstore on Postgres), the transactions the claim and the
// webhook applier run over (ClaimTx, InboxTx), and the values and errors
// they pass. It imports no driver: consumers (internal/claim, webhook,
// runner, hostshare, storetest) depend on this contract, not on a store.
package driver

import (
	"context"
	"database/sql"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Driver is the store's seam: every method of *store.Store that product
// code outside the store calls, grouped by concern. It is what a second
// driver (Postgres, issue 30) implements, and storetest.Run is what proves
// it: a driver is conformant when it passes that suite, not when it
// compiles against this interface. Consumers keep their own narrow
// interfaces (readmodel.Source, report's and hostshare's); *Store
// satisfies them because it satisfies this. The engine's dispatch.Ledger
// is internal/claim's Ledger: the claim runs above the driver, over its
// ClaimTx.
//
// What a driver must keep, whatever its database: every write of a row's
// state is one of the named moves (store's transitions.go) and is a no-op when the
// row is no longer in the state the move starts from; a claim takes its
// rows, their tokens and their daily-cap units in one transaction, so two
// processes on one database never spend the same token or cap unit; the
// per-campaign counts stay equal to a recount after every move; a quota
// day only moves forward; nobody is messaged twice (a row whose request
// may have started is never made pending again by a rescue).
//
// The read models (internal/readmodel) are not methods here: they run
// read-only SQL on Reader, written once for both databases. A driver whose
// Reader is not SQLite says which it is with ReaderDialect() string
// (pgstore's "postgres", over pgx's database/sql adapter), and readmodel
// rebinds its queries to it (readmodel.Dialect); storetest's read-only
// checks go through the same Rebind.
//
// The types its signatures name (Importer, Gates, InboxTx, SyncMark, …)
// are this package's, so a driver in any package returns and takes them.
type Driver interface {
	// The handle and its clock.

	// Close releases the database; nothing may be called after it.
	Close() error
	// Now is the driver's clock (Options.Now): timestamps it writes itself
	// come from it, never from time.Now.
	Now() time.Time
	// Location is the zone quota days are counted in, fixed in the
	// database (campaign.QuotaDay gives t's day there).
	Location() *time.Location
	// SetTimezone fixes another zone of quota days; it returns the old one.
	SetTimezone(ctx context.Context, name string) (old string, err error)
	// QuotaDayOpens is nil when quota days may open, or the
	// *campaign.ZoneMismatchError that keeps every one shut.
	QuotaDayOpens() error
	// Path says where the database is, for status: a file's path (a
	// network database would give its address without credentials).
	Path() string
	// Reader is the handle for read-only queries (internal/readmodel);
	// nothing writes through it.
	Reader() *sql.DB

	// Campaign import and the campaign's settings.

	// Import starts a campaign's import in one transaction (ErrExists for
	// a fingerprint already imported); the Importer adds rows and commits.
	Import(ctx context.Context, c campaign.Campaign) (Importer, error)
	Campaign(ctx context.Context, id int64) (campaign.Campaign, error)
	// SetServiceWindow says whether a campaign's rows need an open
	// customer service window at each claim.
	SetServiceWindow(ctx context.Context, id int64, on bool) error
	// Counts is a campaign's rows by state, as the counts kept by every
	// move say (a recount gives the same).
	Counts(ctx context.Context, id int64) (campaign.Counts, error)
	SetSchedule(ctx context.Context, id int64, sc campaign.Schedule) error
	SetShare(ctx context.Context, id int64, ch campaign.ShareChange) error
	SetPairGap(ctx context.Context, campaignID int64, gap time.Duration) error
	// SetBudget keeps --max-cost (0: none), prices every row of the
	// campaign with price and recounts what is committed, claims excluded.
	SetBudget(ctx context.Context, id int64, max pricing.Micros, currency string, price func(phone string) pricing.Micros) error
	// SetSending keeps --max-held and --ttl (0: the one kept) with a
	// campaign and returns the TTL in force.
	SetSending(ctx context.Context, id int64, maxHeld int, ttl time.Duration) (time.Duration, error)

	// Claims and outcomes: what dispatch.Ledger needs.

	// WithClaim runs a claim (internal/claim) in a sending transaction: the
	// claim reads and writes through ClaimTx, and fn's error rolls it
	// back. A claim takes its rows, their tokens and their daily-cap units
	// in that one transaction.
	WithClaim(ctx context.Context, fn func(ClaimTx) error) error
	// RecordAll stores outcomes (sent, retry, failed, unknown) in one
	// transaction, each only while its row is the claim's (its fence) — a
	// sent one even after a rescue made the row unknown (the wamid is the
	// truth) —; refused ones make the error a *campaign.FenceError.
	RecordAll(ctx context.Context, runner string, rs []campaign.Result) error
	// RecordWithClaim is RecordAll then WithClaim in one transaction; err is
	// RecordAll's, claimErr fn's (what fn wrote is taken back, the
	// outcomes stay).
	RecordWithClaim(ctx context.Context, runner string, rs []campaign.Result, fn func(ClaimTx) error) (claimErr, err error)
	// CampaignStopped is nil while the campaign may send, else
	// campaign.ErrPaused or ErrCancelled.
	CampaignStopped(ctx context.Context, id int64) error
	// SetOutage notes (or, with the zero Outage, clears) an outage of the
	// Cloud API; a pause reason pauses the campaign too.
	SetOutage(ctx context.Context, campaignID int64, o campaign.Outage, pause string) error

	// Runners and rescue.

	RegisterRunner(ctx context.Context, r campaign.Runner) error
	// Heartbeat extends the leases of the runner's rows in flight; it is
	// campaign.ErrNotFound for a runner taken for dead.
	Heartbeat(ctx context.Context, id string, now time.Time) error
	UnregisterRunner(ctx context.Context, id string) error
	// Start marks claims' requests started, each only while its row is
	// still that claim (its fence); it returns the rows refused, whose
	// requests must not be made.
	Start(ctx context.Context, runner string, cs []campaign.Claim, now time.Time) (refused []int64, err error)
	// RecoverOrphans ends the leases that ran out or whose runner is dead
	// (or unregistered) as campaign.LeaseExpiry says, and returns the rows
	// made unknown by campaign; Rescue does it for one campaign while its
	// engine runs. One rescuer runs at a time.
	RecoverOrphans(ctx context.Context, now time.Time, dead func(campaign.Runner) bool) (map[int64]int, error)
	Rescue(ctx context.Context, campaignID int64, now time.Time, dead func(campaign.Runner) bool) (int, error)

	// The campaign's moves (the named transitions) and requeues.

	PauseCampaign(ctx context.Context, id int64, reason string) (campaign.CampaignState, error)
	ResumeCampaign(ctx context.Context, id int64) (string, error)
	CancelCampaign(ctx context.Context, id int64) (campaign.CampaignState, error)
	DeleteCampaign(ctx context.Context, id int64) error
	RenameCampaign(ctx context.Context, id int64, name string) error
	RequeueFailed(ctx context.Context, id int64, codes []int) (int, error)
	RequeueUnknown(ctx context.Context, id int64) (int, error)
	RequeueUndelivered(ctx context.Context, id int64, sentBefore time.Time) (int, error)
	// DropAccount stops an account for one campaign (an account-fatal
	// answer); ReadmitAccount takes it back if its reason has prefix.
	DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error
	ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (bool, error)
	// RecordCheck keeps an account check's finding (empty: it passed).
	RecordCheck(ctx context.Context, accountID int64, f campaign.CheckFinding) error

	// Accounts, tiers, portfolios and the quota.

	// SetTier changes a tier's limits; tokens earned at the old rate are
	// kept.
	SetTier(ctx context.Context, name string, l campaign.Limits) error
	AddAccount(ctx context.Context, a campaign.Account) (campaign.Account, error)
	UpdateAccount(ctx context.Context, name string, ch campaign.AccountChange) (campaign.AccountStatus, error)
	RemoveAccount(ctx context.Context, name string) error
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Account(ctx context.Context, name string) (campaign.AccountStatus, error)
	RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (campaign.AccountStatus, error)
	SetAutoTier(ctx context.Context, name string, on *bool, promoteAfter *time.Duration) error
	SetGlobalLimit(ctx context.Context, on bool, l ratelimit.Limit) error
	// ResetQuota opens a new quota day for the named accounts (all when
	// none): only forward, once a day unless forced.
	ResetQuota(ctx context.Context, names []string, force bool) ([]campaign.QuotaReset, error)
	AddPortfolio(ctx context.Context, p campaign.Portfolio) (campaign.Portfolio, error)
	UpdatePortfolio(ctx context.Context, name string, ch PortfolioChange) (campaign.Portfolio, error)
	Portfolios(ctx context.Context) ([]campaign.PortfolioStatus, error)

	// Limits shared between hosts (--limits): claims ask the gates.

	ShareLimits(ctx context.Context, g Gates, unavailable func(error) bool) error
	HostPart(ctx context.Context, portfolio, today string) (limits.RebuildRequest, error)

	// Suppressions: listed numbers are failed at claim, never sent.

	Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error)
	Unsuppress(ctx context.Context, phones []string) (removed int, err error)
	// The copy of the shared list (hostshare): how far it is applied, and
	// the outbox of numbers listed here to push up.
	SharedSuppressionsMark(ctx context.Context) (SyncMark, error)
	ApplySuppressions(ctx context.Context, listed []campaign.Suppression, removed []string, mark SyncMark) error
	ToPush(ctx context.Context, limit int) ([]Push, error)
	Pushed(ctx context.Context, seq int64) error
	PushAll(ctx context.Context) (int, error)

	// The webhook inbox: bodies stored first, applied later.

	AddToInbox(ctx context.Context, bodies [][]byte) error
	// WithInbox runs the applier (internal/webhook) in one transaction at
	// the driver's clock: it decides what each body means and makes the
	// moves through InboxTx; fn's error rolls it back.
	WithInbox(ctx context.Context, fn func(tx InboxTx, now time.Time) error) error
	// Inbound messages (store's inbound.go): their retention and their settings.
	PruneInbound(ctx context.Context, before time.Time) (int, error)
	InboundSettings(ctx context.Context) (map[string]string, error)
	SetInboundSetting(ctx context.Context, key, value string, unset bool) error

	// Templates, as last synced from the Cloud API.

	ReplaceTemplates(ctx context.Context, waba string, ts []campaign.Template) error
	RecordMarketingStatus(ctx context.Context, waba, status string, at time.Time) error // a WABA's onboarding, as synced
	// A rate card kept whole, or refused (pricing.ErrCardOverlap) leaving nothing.
	ImportCard(ctx context.Context, c pricing.Card) (int64, error)
}

// Importer is one campaign's import, in a single transaction that holds the
// write lock: either the whole file lands, or (on error, interrupt or
// crash) nothing does. Screening is the caller's (internal/screen): every
// row given is stored.
type Importer interface {
	// AddBatch stores rows given in file order (Add one); they may wait
	// in memory for more, or for Commit. It returns no skips.
	AddBatch(ctx context.Context, msgs []campaign.Message) ([]campaign.Skip, error)
	Add(ctx context.Context, m campaign.Message) (reason string, err error)
	// SkipBatch records rows not imported and why (Skip one).
	SkipBatch(ctx context.Context, skips []campaign.Skip) error
	Skip(ctx context.Context, line int, input, reason string) error
	// SameMessage is the other campaigns sending the same message, newest
	// first; EachNumber calls fn with each number of one of them. Both
	// read inside the import's transaction: no process can add one
	// meanwhile.
	SameMessage(ctx context.Context) ([]Sibling, error)
	EachNumber(ctx context.Context, id int64, fn func(phone string)) error
	// SetKeys sets the source and recipients keys Commit stores.
	SetKeys(source, recipients string)
	// Commit makes the campaign and all its rows visible at once;
	// ContinueInto adds the rows to the unfinished campaign prior instead
	// and commits. Rollback discards the import, and is safe after either.
	Commit(ctx context.Context) (campaign.Campaign, error)
	ContinueInto(ctx context.Context, prior campaign.Campaign) (campaign.Campaign, error)
	Rollback()
}
