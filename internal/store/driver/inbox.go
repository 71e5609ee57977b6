package driver

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// InboxTx is the webhook applier's transaction as the store executes it:
// the inbox's reads and the moves a status, an event or an inbound message
// makes, each SQL that decides nothing. Which move a body makes is
// internal/webhook's, which runs over this interface (WithInbox); a second
// driver implements the same operations and passes the same suite.
type InboxTx interface {
	// Bodies are up to max stored bodies not yet applied, oldest first;
	// Applied marks bodies ids applied, why (when not "") what was skipped.
	Bodies(ctx context.Context, max int) ([]InboxBody, error)
	Applied(ctx context.Context, ids []int64, why string, now time.Time) error
	// Part runs apply under a savepoint. When apply fails for a reason of
	// its own (a row or campaign it cannot move, a constraint), what it
	// wrote is undone and skip is that error; err is a fault of the
	// database itself (busy, full, I/O): the whole drain rolls back.
	Part(ctx context.Context, apply func() error) (skip, err error)
	// NoteNumber keeps which phone number id a display number is.
	NoteNumber(ctx context.Context, display, id string, now time.Time) error

	// KeepStatus stores a status once: kept is false when it was stored
	// before, matched then whether it was matched to its row.
	KeepStatus(ctx context.Context, ev campaign.StatusEvent, now time.Time) (kept, matched bool, err error)
	// WAMIDRow is the row carrying wamid, else the row its kept statuses
	// were matched to (0: none); RowPhone the phone of message id if it is
	// campaign campaignID's; LinkStatus matches a kept status to row id.
	// Which row a status is about is internal/webhook's (matchStatus).
	WAMIDRow(ctx context.Context, wamid string) (int64, error)
	RowPhone(ctx context.Context, campaignID, id int64) (phone string, ok bool, err error)
	LinkStatus(ctx context.Context, id int64, ev campaign.StatusEvent) error
	// StatusRow is what a status's meaning depends on of row id (ok false:
	// the row is gone), and the row's phone.
	StatusRow(ctx context.Context, id int64, ev campaign.StatusEvent) (r campaign.StatusRow, phone string, ok bool, err error)
	// Deferred are kept statuses whose row was in flight when they came and
	// has been recorded since; Defer sets whether one still waits.
	Deferred(ctx context.Context, max int) ([]DeferredStatus, error)
	Defer(ctx context.Context, ev campaign.StatusEvent, wait bool) error
	// The moves a status makes on its row; false when the row was not in
	// a state the move starts from.
	AdoptSend(ctx context.Context, id int64, ev campaign.StatusEvent, now time.Time) (bool, error)
	FailAfterSend(ctx context.Context, id int64, ev campaign.StatusEvent, why string, now time.Time) (bool, error)
	RescheduleAfterFailure(ctx context.Context, id int64, ev campaign.StatusEvent, retryAt time.Time, why string, now time.Time) (bool, error)
	// Its effects beyond the row, and those of events.
	OurNumber(ctx context.Context, phoneNumberID string) (bool, error)
	Suppress(ctx context.Context, phone, reason string, now time.Time) error
	PauseCampaign(ctx context.Context, id int64, why string) error
	RestrictAccount(ctx context.Context, id int64, until time.Time, why string, code int) error
	DropAccount(ctx context.Context, campaignID, accountID int64, why string, code int, now time.Time) error
	PauseTemplate(ctx context.Context, ev campaign.TemplateEvent, why string) (int, error)
	StopNumber(ctx context.Context, ev campaign.AccountEvent, why string, until time.Time) (int, error)
	// RaiseThroughput applies a THROUGHPUT_UPGRADE to the number's accounts
	// (marketing.go).
	RaiseThroughput(ctx context.Context, ev campaign.AccountEvent, now time.Time) (int, error)

	// Statuses in bulk: StatusFacts are the rows carrying the wamids (what
	// Settle reads, WAMIDFailed left out) and the statuses of them kept
	// before; KeepAdvances keeps statuses matched to their rows and moves
	// each row's delivery up the ladder (campaign.DeliveryAdvance), moved
	// being the rows that were in the move's source states.
	StatusFacts(ctx context.Context, wamids []string) ([]campaign.StatusRow, []campaign.KeptStatus, error)
	KeepAdvances(ctx context.Context, kept []MatchedStatus, moves []campaign.DeliveryAdvance, now time.Time) (moved []int64, err error)

	// Inbound messages (inbound.go).

	AccountOf(ctx context.Context, phoneNumberID string) (int64, error)
	// KeepInbound stores an inbound message once; false: kept before.
	KeepInbound(ctx context.Context, m campaign.InboundRow) (bool, error)
	// ContextRow is the message of ours with wamid sent to phone, if any;
	// SentTo the messages to phone in flight or sent.
	ContextRow(ctx context.Context, wamid, phone string) (campaign.RepliedRow, bool, error)
	SentTo(ctx context.Context, phone string) ([]campaign.SentRow, error)
	WaitingInbound(ctx context.Context, max int) ([]campaign.InboundRow, error)
	LinkInbound(ctx context.Context, id string, r campaign.RepliedRow) error
	// NoteReply notes an answer on its row; first: the row's first reply.
	NoteReply(ctx context.Context, r campaign.RepliedRow, at time.Time, text string) (first bool, err error)
	NoteOptOut(ctx context.Context, r campaign.RepliedRow, at time.Time) error

	// Recipient links (links.go): LearnLinks keeps the phone ↔ user id
	// pairs a body showed; InboundSender is the key an inbound message is
	// filed under (its number, a user id's linked number, or the id).
	LearnLinks(ctx context.Context, links []campaign.IdentityLink, now time.Time) error
	InboundSender(ctx context.Context, m campaign.InboundMessage) (string, error)
}

// InboxBody is one stored webhook body.
type InboxBody struct {
	ID   int64
	Body []byte
}

// DeferredStatus is a kept status waiting for its row (ID); MatchedStatus
// one matched to it.
type (
	DeferredStatus struct {
		ID int64
		Ev campaign.StatusEvent
	}
	MatchedStatus = DeferredStatus
)
