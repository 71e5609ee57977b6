package campaign

import (
	"strings"
	"time"
)

// Delivery is what Meta's status webhooks say became of a sent message, a
// rung of DeliveryLadder. It only moves forward: held < sent < delivered <
// read; failed is final and can follow any of them.
type Delivery string

const (
	// DeliveryHeld is no webhook's: the send's answer said
	// message_status held_for_quality_assessment (template pacing). A
	// status settles it: sent when Meta releases it, failed when it drops it.
	DeliveryHeld      Delivery = "held"
	DeliverySent      Delivery = "sent"      // left Meta's servers
	DeliveryDelivered Delivery = "delivered" // on the person's device
	DeliveryRead      Delivery = "read"      // displayed
	DeliveryFailed    Delivery = "failed"    // not delivered, with an error
)

// Rank orders delivery states by their place in DeliveryLadder (1 for its
// first rung); 0 is none or not one wasend tracks (played).
func (d Delivery) Rank() int {
	for i, r := range DeliveryLadder {
		if r.Delivery == d {
			return i + 1
		}
	}
	return 0
}

// Reported says whether a status webhook names d: a rung of the ladder
// other than held, which only the send's answer gives.
func (d Delivery) Reported() bool { return d.Rank() > 0 && d != DeliveryHeld }

// Received reports whether the person has the message (delivered or read:
// the rungs of DeliveryLadder marked Received). A received message is never
// sent again automatically, whatever arrives after (a late failed status
// included).
func (d Delivery) Received() bool {
	for _, r := range DeliveryLadder {
		if r.Delivery == d {
			return r.Received
		}
	}
	return false
}

// StatusEvent is one entry of a messages webhook's statuses[].
type StatusEvent struct {
	WAMID     string
	Status    Delivery
	At        time.Time // the webhook's own timestamp
	Recipient string    // recipient_id, the person's number without +
	// RecipientUserID is recipient_user_id: the person's business-scoped
	// user id, the only recipient a status of a message sent to one may
	// name.
	RecipientUserID string
	CallbackData    string // biz_opaque_callback_data, when the send set it
	PhoneNumberID   string // metadata.phone_number_id: the sending number
	Pricing         string // pricing.category, when present
	PricingType     string // pricing.type: regular, free_customer_service, free_entry_point
	PricingModel    string // pricing.pricing_model: PMP (per message)
	NotBillable     bool   // pricing.billable was false (deprecated by Meta with per-message pricing)
	ErrorCode       int    // errors[0].code of a failed status
	ErrorTitle      string // errors[0].title, with error_data.details
}

// AsyncFailure is what a failed status means for its row, decided by the
// same classifier as a synchronous answer (internal/whatsapp).
type AsyncFailure struct {
	// Retry puts the row back to pending, not before RetryAt; otherwise it
	// fails for good.
	Retry   bool
	RetryAt time.Time
	Error   string // stored on the row: "error CODE: title"

	Suppress    bool          // the person stopped marketing messages
	Restrict    time.Duration // stop the sending account this long
	DropAccount bool          // stop the sending account for this campaign
	Pause       string        // pause the campaign with this reason
}

// TemplateEvent is a message_template_status_update: a template whose new
// status (PAUSED, DISABLED, …) stops the campaigns that use it.
type TemplateEvent struct {
	Template string
	Lang     string
	Event    string // APPROVED, PAUSED, DISABLED, REJECTED, …
	Reason   string
}

// Stops reports whether campaigns using the template must pause.
func (e TemplateEvent) Stops() bool {
	switch e.Event {
	case "PAUSED", "DISABLED", "REJECTED", "FLAGGED", "PENDING_DELETION", "DELETED":
		return true
	}
	return false
}

// AccountEvent is a phone_number_quality_update or account_update that
// flags or restricts a business number.
type AccountEvent struct {
	PhoneNumberID string // empty for a whole WhatsApp Business Account
	DisplayNumber string
	Field         string // phone_number_quality_update, account_update
	Event         string // FLAGGED, DISABLED, ACCOUNT_RESTRICTION, …
	Reason        string
}

// Notification is what one webhook body carries that wasend acts on.
type Notification struct {
	Statuses  []StatusEvent
	Templates []TemplateEvent
	Accounts  []AccountEvent
	// Upgrades are phone_number_quality_update THROUGHPUT_UPGRADE events:
	// the number's throughput was raised (80 → 1,000 msg/s).
	Upgrades []AccountEvent
	Inbound  []InboundMessage
	// Numbers pairs display numbers with phone number ids, as the
	// metadata of messages webhooks shows them.
	Numbers map[string]string
	// Links pair the phone numbers and business-scoped user ids the body
	// showed together: one person, whichever of them a row names.
	Links []IdentityLink
}

// ApplyReport counts what applying webhook bodies did.
type ApplyReport struct {
	Bodies      int // bodies applied
	Malformed   int // bodies that are JSON but not a notification wasend can read
	Statuses    int // status events read
	Duplicates  int // of which already kept: changed nothing
	Unmatched   int // of which for messages wasend never sent: counted and ignored
	Deferred    int // of which for rows still in flight: settled once recorded
	Adopted     int // unknown (or requeued) rows proven sent by a webhook
	Advanced    int // rows whose delivery state moved forward
	Failed      int // rows failed by an asynchronous failure
	Rescheduled int // rows put back to pending by an asynchronous failure
	Paused      int // campaigns paused by a template event
	Stopped     int // accounts stopped by an account event
	// NotResent counts failed statuses that would have sent their row
	// again but did not: the person had it (delivered or read), or its
	// campaign was cancelled.
	NotResent int
	// Skipped counts parts of bodies (a status, an event) that could not
	// apply: undone alone, their reasons in Skips and kept with the body;
	// the rest of the inbox applies.
	Skipped int
	Skips   []string
	// Inbound counts inbound messages read, of which Unknown were of a
	// type or shape wasend does not read (kept and counted), Replies
	// answered a message of ours, OptOuts suppressed their number and
	// OptIns asked to be messaged again.
	Inbound, InboundUnknown, Replies, OptOuts, OptIns int
	// ByStatus counts new (not duplicate) status events by status.
	ByStatus map[Delivery]int
}

// Add adds another report's counts.
func (r *ApplyReport) Add(o ApplyReport) {
	r.Bodies += o.Bodies
	r.Malformed += o.Malformed
	r.Statuses += o.Statuses
	r.Duplicates += o.Duplicates
	r.Unmatched += o.Unmatched
	r.Deferred += o.Deferred
	r.Adopted += o.Adopted
	r.Advanced += o.Advanced
	r.Failed += o.Failed
	r.Rescheduled += o.Rescheduled
	r.Paused += o.Paused
	r.Stopped += o.Stopped
	r.NotResent += o.NotResent
	r.Skipped += o.Skipped
	r.Inbound += o.Inbound
	r.InboundUnknown += o.InboundUnknown
	r.Replies += o.Replies
	r.OptOuts += o.OptOuts
	r.OptIns += o.OptIns
	r.Skips = append(r.Skips, o.Skips...)
	for k, v := range o.ByStatus {
		if r.ByStatus == nil {
			r.ByStatus = map[Delivery]int{}
		}
		r.ByStatus[k] += v
	}
}

// StatusRecipientIs reports whether a status names the recipient of a row
// whose recipient is phone (a number or a user id): by recipient_id, or
// by recipient_user_id for a row sent to a user id. A status naming
// neither says nothing against it.
func StatusRecipientIs(phone string, ev StatusEvent) bool {
	if ev.Recipient == "" && ev.RecipientUserID == "" {
		return true
	}
	if IsBSUID(phone) {
		return ev.RecipientUserID == phone || ev.Recipient == phone
	}
	return ev.Recipient == "" || strings.TrimPrefix(phone, "+") == strings.TrimPrefix(ev.Recipient, "+")
}
