package campaign

// Transition is one legal move of a message between states, named for
// why it happens. The store moves rows only through a function named for
// a Transition, whose UPDATE applies only to rows in one of its From
// states: there is no way to ask for a move that is not in the table, and
// a row in any other state is left alone. (River's job states and its
// JobSetStateIfRunning / JobRescueMany queries are the model.)
type Transition int

// The transitions, in the order of a message's life. Every one of them is
// in Transitions, with its states and its reason.
const (
	// MoveClaim takes due pending rows for a runner, after their account and
	// the global bucket gave a token each.
	MoveClaim Transition = iota + 1
	// MoveSuppressAtSend fails a due pending row whose number was put on the
	// suppression list after the import; it is checked again at each claim.
	MoveSuppressAtSend
	// MoveRecordSent stores the Cloud API's acceptance (a wamid). It also
	// applies to an unknown row: a late answer is the truth.
	MoveRecordSent
	// MoveRecordRetry puts a claimed row back to pending, due at a later time:
	// a throttle or transient error that proves the request was not
	// accepted.
	MoveRecordRetry
	// MovePutBack returns a claim to pending without a request: the account or
	// campaign stopped meanwhile, or the runner was interrupted before
	// sending. (Stored as a retry due at once, its quota given back.)
	MovePutBack
	// MoveRecordFailed stores an answer that says the row can never succeed
	// as it is (or the retry budget is spent).
	MoveRecordFailed
	// MoveRecordUnknown stores an ambiguous end of a request (timeout, a
	// dropped connection after the request was written): it may have been
	// accepted, so it is never resent automatically.
	MoveRecordUnknown
	// MoveRescue declares unknown a claimed row whose lease ran out after
	// its request started (LeaseExpiry), for the same reason.
	MoveRescue
	// MoveRequeueFailed is the operator's `campaign retry`: failed rows go back
	// to pending with a fresh retry budget.
	MoveRequeueFailed
	// MoveRequeueUnknown is the operator's `campaign retry --unknown`: the
	// operator accepts that some of these may be sent twice.
	MoveRequeueUnknown
	// MoveExpire ends pending rows not sent within the campaign's validity
	// (--expire-after).
	MoveExpire
	// MoveFailNeverOpen fails a pending row whose send window is never open
	// in all of its recipient's time zones at once.
	MoveFailNeverOpen
	// MoveAdoptSend settles a row whose request's fate was not recorded
	// (unknown, or requeued and not yet sent again) as sent: a status
	// webhook carries its wamid as proof.
	MoveAdoptSend
	// MoveFailAfterSend fails a sent row: a status webhook reported that
	// Meta did not deliver it, for a reason that will not change.
	MoveFailAfterSend
	// MoveRescheduleUndelivered puts a sent row back to pending, no sooner
	// than a day later: Meta reported it undelivered for the per-user
	// marketing limit (131049), so it never reached the person.
	MoveRescheduleUndelivered
	// MoveRequeueUndelivered is the operator's `campaign retry
	// --undelivered`: sent rows no webhook reported delivered go again.
	MoveRequeueUndelivered
	// MoveSkipElsewhere fails a due pending row whose recipient another
	// host sharing the limits (--limits) sent the same message, or has it
	// in flight: the repeat guard across hosts.
	MoveSkipElsewhere
	// MoveSkipNoWindow fails a due pending row of a free-form (text)
	// campaign whose recipient's customer service window is not open.
	MoveSkipNoWindow
	// MoveRecordHeld stores an acceptance whose answer said
	// held_for_quality_assessment: sent (it has a wamid and is never sent
	// again), its delivery DeliveryHeld until a status settles it.
	MoveRecordHeld
	// MoveLapse puts a claimed row back to pending when its lease ran out
	// before its request started (LeaseExpiry): nothing reached the API.
	MoveLapse
)

// TransitionRule is one row of the state machine's table.
type TransitionRule struct {
	Name string
	From []State
	To   State
	Why  string
}

// Transitions is the message state machine: every legal move, and only
// those. A pair of states not listed here never happens; in particular a
// sent row never goes back to pending (that would be a double send).
//
// Room for what is coming, each a row here with its own named statement
// in the store, its states and reasons decided where the feature lands:
//   - webhook delivery (delivered, read) is kept beside the state, in the
//     delivery column, and only moves forward (DeliveryLadder); the
//     webhook's state moves are the rows below (adopt, fail after send,
//     reschedule, requeue);
//   - scheduled rows (a scheduled campaign's rows simply stay pending);
//   - waits for a portfolio's reach.
//
// A new state also needs the CHECK on messages.state widened (a rebuild of
// the table, as migration 0004 does) and its place in States and in the
// kept counts (internal/store/counts.sql).
var Transitions = map[Transition]TransitionRule{
	MoveClaim: {"claim", []State{Pending}, Sending,
		"an account and the global bucket gave a token and the daily cap counted one"},
	MoveSuppressAtSend: {"suppress at send", []State{Pending}, Failed,
		"the number is on the suppression list, checked again before each send"},
	MoveRecordSent: {"record sent", []State{Sending, Unknown}, Sent,
		"the Cloud API accepted the message; its wamid is the truth even for a row declared unknown"},
	MoveRecordRetry: {"record retry", []State{Sending}, Pending,
		"throttled or a transient error: the request was not accepted, try again later"},
	MovePutBack: {"put back unsent", []State{Sending}, Pending,
		"claimed but never sent: the account or campaign stopped, or the runner was interrupted"},
	MoveRecordFailed: {"record failed", []State{Sending}, Failed,
		"the answer says the message can never succeed as it is, or the retry budget is spent"},
	MoveRecordUnknown: {"record unknown", []State{Sending}, Unknown,
		"the request may have reached the API (timeout, dropped connection): never resent automatically"},
	MoveRescue: {"rescue", []State{Sending}, Unknown,
		"the lease ran out (or its runner died) after the request started: it may have reached the API"},
	MoveRequeueFailed: {"requeue failed", []State{Failed}, Pending,
		"the operator retries failed rows with a fresh retry budget"},
	MoveRequeueUnknown: {"requeue unknown", []State{Unknown}, Pending,
		"the operator accepts the risk of a double send for rows whose fate is unknown"},
	MoveExpire: {"expire", []State{Pending}, Expired,
		"the campaign's validity (--expire-after) ran out before the row was sent"},
	MoveFailNeverOpen: {"fail: window never open", []State{Pending}, Failed,
		"the send window is never open in all of the recipient's time zones at once"},
	MoveAdoptSend: {"adopt send", []State{Unknown, Pending}, Sent,
		"a status webhook proves with its wamid that the request was accepted"},
	MoveFailAfterSend: {"fail after send", []State{Sent}, Failed,
		"a status webhook reports a permanent failure of the accepted message"},
	MoveRescheduleUndelivered: {"reschedule undelivered", []State{Sent}, Pending,
		"a status webhook reports the message was not delivered (131049): it never reached the person"},
	MoveRequeueUndelivered: {"requeue undelivered", []State{Sent}, Pending,
		"the operator resends messages no webhook reported delivered; delivered and read rows never go back"},
	MoveSkipElsewhere: {"skip: sent by another host", []State{Pending}, Failed,
		"another host sharing the limits sent the recipient the same message within 24 h, or has it in flight"},
	MoveSkipNoWindow: {"skip: no service window", []State{Pending}, Failed,
		"a text message, and the recipient wrote no message in the last 24 h: the Cloud API would refuse it (131047)"},
	MoveLapse: {"lapse", []State{Sending}, Pending,
		"the lease ran out (or its runner died) before the request started: nothing reached the API"},
	MoveRecordHeld: {"record held", []State{Sending, Unknown}, Sent,
		"accepted but held for quality assessment (template pacing): its delivery is held until a status releases or drops it"},
}

// DeliveryRung is one rung of the delivery ladder.
type DeliveryRung struct {
	Delivery Delivery
	// Received: the person has the message. A received row is never
	// failed nor sent again (no move in SentBack, no fail after send).
	Received bool
	Why      string
}

// DeliveryLadder is where a sent row's delivery stands, kept beside its
// state in the delivery column (NULL: no status yet), in rank order: a
// row's delivery only moves to a later rung, and failed, the last, is
// final. It is the one place the ladder is ranked: Delivery.Rank and
// Delivery.Received read it, and the store builds every SQL fragment that
// ranks or guards on the delivery column from it.
var DeliveryLadder = []DeliveryRung{
	{DeliveryHeld, false, "accepted, held by Meta for quality assessment (template pacing): released (sent) or dropped (failed) later"},
	{DeliverySent, false, "the message left Meta's servers"},
	{DeliveryDelivered, true, "the message is on the person's device"},
	{DeliveryRead, true, "the person displayed the message"},
	{DeliveryFailed, false, "Meta reported it could not deliver the message; nothing moves it on"},
}

// SentBack are the only moves from sent back to pending. Each needs proof
// or a decision that the person did not get the message: a failed status
// from Meta, or the operator's retry of undelivered rows. Nothing else may
// make a sent row claimable again, or the recipient gets it twice.
var SentBack = []Transition{MoveRescheduleUndelivered, MoveRequeueUndelivered}

// AllTransitions lists every transition in the order of a message's life.
var AllTransitions = []Transition{MoveClaim, MoveSuppressAtSend, MoveRecordSent, MoveRecordRetry, MovePutBack, MoveRecordFailed,
	MoveRecordUnknown, MoveRescue, MoveRequeueFailed, MoveRequeueUnknown, MoveExpire, MoveFailNeverOpen,
	MoveAdoptSend, MoveFailAfterSend, MoveRescheduleUndelivered, MoveRequeueUndelivered, MoveSkipElsewhere, MoveSkipNoWindow, MoveRecordHeld, MoveLapse}

// String is the transition's name in the table.
func (t Transition) String() string {
	if r, ok := Transitions[t]; ok {
		return r.Name
	}
	return "transition(?)"
}

// From are the states a row must be in for t to move it.
func (t Transition) From() []State { return Transitions[t].From }

// To is the state t moves a row to.
func (t Transition) To() State { return Transitions[t].To }

// Transition is the move that recording o makes: a put-back is stored as
// a retry due at once (its Refund gives the quota back), so it shares
// RecordRetry's statement. It is 0 for an outcome of no known kind.
func (o Outcome) Transition() Transition {
	switch o.Kind {
	case OutcomeSent:
		if o.Held {
			return MoveRecordHeld
		}
		return MoveRecordSent
	case OutcomeRetry:
		return MoveRecordRetry
	case OutcomeFailed:
		return MoveRecordFailed
	case OutcomeUnknown:
		return MoveRecordUnknown
	}
	return 0
}

// CampaignTransition is one legal move of a whole campaign between
// states; like Transition, the store changes a campaign's state only
// through statements named for these.
type CampaignTransition int

const (
	// CampaignPause stops a running campaign: the operator's `campaign
	// pause`, an answer that pauses the campaign, or an outage past its
	// timeout.
	CampaignPause CampaignTransition = iota + 1
	// CampaignPauseNoAccount pauses a campaign being claimed when every
	// enabled account was dropped from it.
	CampaignPauseNoAccount
	// CampaignResume is the operator's `campaign resume`.
	CampaignResume
	// CampaignFinish ends a campaign with no open row left.
	CampaignFinish
	// CampaignReopen runs a finished campaign again when rows were
	// requeued (never a cancelled one: the store refuses that first).
	CampaignReopen
	// CampaignCancel is the operator's `campaign cancel`. A cancelled
	// campaign is stored as finished with cancelled_at set, and shown as
	// CampaignCancelled.
	CampaignCancel
)

// CampaignTransitionRule is one row of the campaign state machine.
type CampaignTransitionRule struct {
	Name string
	From []CampaignState
	To   CampaignState
	Why  string
}

// CampaignTransitions is the campaign state machine: every stored move
// (CampaignCancelled is not a stored state; see CampaignCancel).
var CampaignTransitions = map[CampaignTransition]CampaignTransitionRule{
	CampaignPause: {"pause", []CampaignState{CampaignRunning}, CampaignPaused,
		"the operator paused it, an answer or too many permanent failures paused it, or the Cloud API was out too long"},
	CampaignPauseNoAccount: {"pause: no usable account", []CampaignState{CampaignRunning, CampaignFinished}, CampaignPaused,
		"every enabled account was dropped from the campaign"},
	CampaignResume: {"resume", []CampaignState{CampaignPaused}, CampaignRunning,
		"the operator fixed what stopped it"},
	CampaignFinish: {"finish", []CampaignState{CampaignRunning}, CampaignFinished,
		"no row is pending or in flight"},
	CampaignReopen: {"reopen", []CampaignState{CampaignFinished}, CampaignRunning,
		"the operator requeued failed or unknown rows"},
	CampaignCancel: {"cancel", []CampaignState{CampaignRunning, CampaignPaused}, CampaignFinished,
		"the operator ended it for good; its pending rows are never sent"},
}

// String is the transition's name in the table.
func (t CampaignTransition) String() string {
	if r, ok := CampaignTransitions[t]; ok {
		return r.Name
	}
	return "campaign transition(?)"
}
