package webhook

import (
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/whatsapp"
)

// What a webhook means for wasend's rows is decided here, from the facts the
// store reads; the store keeps the bodies and statuses and makes the moves
// decided (Drain, over driver.InboxTx), each status in its own savepoint.

// Policy is what asynchronous failures and account events do.
type Policy struct {
	// NoReschedule fails 131049 rows instead of sending them again later.
	NoReschedule bool
	// Reschedule is how long a 131049 row waits; at least 24 h.
	Reschedule time.Duration
	// Restriction is how long a flagged or restricted account stops (as
	// after a synchronous 131048); default 6 h.
	Restriction time.Duration
}

// MarketingLimitWait is the least a row failed with 131049 (Meta's
// per-user marketing limit) waits before it is sent again.
const MarketingLimitWait = 24 * time.Hour

func (p Policy) withDefaults() Policy {
	if p.Reschedule < MarketingLimitWait {
		p.Reschedule = MarketingLimitWait
	}
	if p.Restriction <= 0 {
		p.Restriction = 6 * time.Hour
	}
	return p
}

// Decide maps a failed status through the same classifier as synchronous
// answers (whatsapp.ClassifyCode) to what becomes of the row. The message
// was not delivered, so sending it again never makes a duplicate; the
// row is still not sent again when a status reported it delivered or read,
// or its campaign was cancelled (resendRefused, in Settle).
func (p Policy) Decide(ev campaign.StatusEvent, now time.Time) campaign.AsyncFailure {
	p = p.withDefaults()
	title := ev.ErrorTitle
	if title == "" {
		title = "failed status without an error"
	}
	f := campaign.AsyncFailure{Error: fmt.Sprintf("error %d after send: %s", ev.ErrorCode, title)}
	if ev.ErrorCode == 131049 {
		if !p.NoReschedule {
			f.Retry, f.RetryAt = true, now.Add(p.Reschedule)
		}
		return f
	}
	switch whatsapp.ClassifyCode(ev.ErrorCode) {
	case whatsapp.ClassLongRestriction:
		f.Retry, f.RetryAt, f.Restrict = true, now, p.Restriction
	case whatsapp.ClassCampaignFatal:
		f.Retry, f.RetryAt = true, now
		f.Pause = f.Error
	case whatsapp.ClassAccountFatal:
		f.Retry, f.RetryAt, f.DropAccount = true, now, true
	default:
		// Permanent, and the throttling and transient codes too: after the
		// fact there is no request to back off from. `campaign retry
		// --code` sends them again.
		f.Suppress = ev.ErrorCode == 131050 // the person stopped marketing messages
	}
	return f
}

// Rules are the decisions Drain makes while it applies the inbox:
// what a body says, what a status does to its row, an opt-out no row
// matches, which templates and numbers stop. They read no database and no
// clock.
type Rules struct {
	p  Policy
	in InboundConfig
}

// NewRules returns the rules of policy p.
func NewRules(p Policy) Rules { return Rules{p.withDefaults(), DefaultInbound()} }

// WithInbound returns the rules with inbound configuration c (the
// database's settings, ParseInbound).
func (r Rules) WithInbound(c InboundConfig) Rules { r.in = c; return r }

// Inbound decides what an inbound message means (InboundConfig.Inbound).
func (r Rules) Inbound(m campaign.InboundMessage) campaign.InboundMeaning { return r.in.Inbound(m) }

// ReplyWindow is how long after our message an answer from its recipient
// is a reply to it; context.id pins an answer to its message at any age.
func (r Rules) ReplyWindow() time.Duration { return r.in.ReplyWindow }

// Decode reads one webhook body: the package's Decode.
func (Rules) Decode(body []byte) (campaign.Notification, error) { return Decode(body) }

// Settle decides what a status does to the row it matched. A status for the
// wamid the row carries moves it; one that proves an unknown (or requeued,
// never answered) row was accepted adopts its wamid first; one for a row
// still in flight waits until its send is recorded; anything else (an
// earlier attempt's late status, a wamid that failed) is kept and changes
// nothing.
func (r Rules) Settle(row campaign.StatusRow, ev campaign.StatusEvent, now time.Time) campaign.StatusAction {
	var a campaign.StatusAction
	switch {
	case row.WAMID != "" && row.WAMID == ev.WAMID:
	case row.State == campaign.Sending:
		a.Move = campaign.StatusWait
		return a
	case row.WAMID == "" && (row.State == campaign.Unknown || row.State == campaign.Pending):
		// A delivered or read proves the person has the message even when
		// its failure came first and put the row back: it is adopted
		// again, and never sent twice.
		if !ev.Status.Received() && ev.Status != campaign.DeliveryFailed && row.WAMIDFailed {
			return a
		}
		a.Adopt = true
	default:
		return a
	}
	if ev.Status != campaign.DeliveryFailed {
		a.Move = campaign.StatusAdvance
		return a
	}
	f := r.p.Decide(ev, now)
	switch why := resendRefused(row, f); {
	case why == refusedReceived:
		// The row stays as the person has it; the failure is kept among
		// the statuses, and what it says beyond the row still holds.
		a.NotResent = true
		f.Pause = ""
	case f.Retry && why == "":
		a.Move, a.RetryAt = campaign.StatusReschedule, f.RetryAt
	default:
		if f.Retry {
			a.NotResent = true
			f.Retry, f.Pause = false, ""
			f.Error += "; " + why
		}
		a.Move = campaign.StatusFail
	}
	a.Error = f.Error
	if f.Suppress {
		a.Suppress = fmt.Sprintf("error %d in campaign %d (status webhook)", ev.ErrorCode, row.CampaignID)
	}
	if !row.Cancelled {
		// A finished campaign runs again (the row went back to pending),
		// then pauses like a running one.
		a.Pause = f.Pause
	}
	if row.AccountID != 0 {
		if f.Restrict > 0 {
			a.RestrictUntil = now.Add(f.Restrict)
		}
		a.DropAccount = f.DropAccount
	}
	return a
}

const (
	refusedReceived  = "the person has the message (delivered or read): not sent again"
	refusedCancelled = "its campaign was cancelled: not sent again"
)

// resendRefused is the one rule for what a failed status may do to a row
// that has a delivery ladder and a campaign: "" when f may apply as
// decided; otherwise why the row is not sent again. A received message
// (campaign.Delivery.Received) is never failed nor sent again; a cancelled
// campaign's row fails for good instead of going back to pending.
func resendRefused(r campaign.StatusRow, f campaign.AsyncFailure) string {
	switch {
	case r.Delivery.Received():
		return refusedReceived
	case r.Cancelled && (f.Retry || f.Pause != ""):
		return refusedCancelled
	}
	return ""
}

// OptOut decides about a status no row of ours matches (its campaign
// deleted, its answer not recorded yet): when it says the person stopped
// marketing messages, phone goes on the suppression list with reason if the
// sending number is one of ours, whatever became of the row. reason is ""
// otherwise.
func (r Rules) OptOut(ev campaign.StatusEvent, now time.Time) (phone, reason string) {
	if ev.Status != campaign.DeliveryFailed || statusPerson(ev) == "" || ev.PhoneNumberID == "" || !r.p.Decide(ev, now).Suppress {
		return "", ""
	}
	return statusPerson(ev),
		fmt.Sprintf("error %d from number %s (status webhook)", ev.ErrorCode, ev.PhoneNumberID)
}

// TemplatePause is the reason the running campaigns sending ev's template
// pause with; "" when the event does not stop them.
func (Rules) TemplatePause(ev campaign.TemplateEvent) string {
	if !ev.Stops() {
		return ""
	}
	why := fmt.Sprintf("template %s is %s", ev.Template, ev.Event)
	if ev.Reason != "" && ev.Reason != "NONE" {
		why += ": " + ev.Reason
	}
	return why + " (template status webhook)"
}

// AccountStop is why and until when the accounts of the number an account
// event flags or restricts stop, as after a synchronous 131048.
func (r Rules) AccountStop(ev campaign.AccountEvent, now time.Time) (why string, until time.Time) {
	why = fmt.Sprintf("%s %s", ev.Field, ev.Event)
	if ev.Reason != "" {
		why += ": " + ev.Reason
	}
	return why, now.Add(r.p.Restriction)
}

// statusPerson is who a status names, as the suppression list holds them:
// the number with its '+', or the business-scoped user id of a message
// sent to one ("" when it names nobody).
func statusPerson(ev campaign.StatusEvent) string {
	switch {
	case ev.Recipient != "":
		return "+" + strings.TrimPrefix(ev.Recipient, "+")
	case ev.RecipientUserID != "":
		return ev.RecipientUserID
	}
	return ""
}
