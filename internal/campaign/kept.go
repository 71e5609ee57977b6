package campaign

import "time"

// What the webhook inbox keeps and reads back, the same on every store.

// InboundRow is an inbound message as kept: its id (the wamid, or a hash
// of the raw message), the sender's phone, and what it means.
type InboundRow struct {
	ID, Phone, PhoneNumberID string
	AccountID                int64 // 0: not a number of ours
	At, ReceivedAt           time.Time
	Type, Text, Payload      string
	ContextID, Name          string
	Kind                     InboundKind
	Reason                   string
	Unknown                  bool
	Raw                      string
	Replies                  RepliedRow
	// Wait: a message to phone is in flight; the answer is linked at a
	// later drain (WaitingInbound).
	Wait bool
}

// RepliedRow is the message of ours an answer replies to (ID 0: none).
type RepliedRow struct {
	ID, CampaignID, AccountID int64
}

// SentRow is a message to a phone in flight (its send not recorded) or
// sent (at SentAt).
type SentRow struct {
	RepliedRow
	InFlight bool
	SentAt   time.Time
}

// KeptStatus is a status kept before (MessageID 0: not matched to a row).
type KeptStatus struct {
	WAMID     string
	Status    Delivery
	MessageID int64
}

// DeliveryAdvance moves row ID, carrying WAMID, up the ladder to To, and
// its delivered and read times to the earliest given (zero: not said).
type DeliveryAdvance struct {
	ID                  int64
	WAMID               string
	To                  Delivery
	DeliveredAt, ReadAt time.Time
}

// Fold adds status ev of the row to the advance: the ladder's highest
// status wins, and the earliest times, so that several statuses folded
// into one move leave the row as they leave it applied one by one, in
// any order.
func (a *DeliveryAdvance) Fold(ev StatusEvent) {
	if a.To == "" || ev.Status.Rank() > a.To.Rank() {
		a.To = ev.Status
	}
	if ev.At.IsZero() {
		return
	}
	if ev.Status.Rank() >= DeliveryDelivered.Rank() && (a.DeliveredAt.IsZero() || ev.At.Before(a.DeliveredAt)) {
		a.DeliveredAt = ev.At
	}
	if ev.Status == DeliveryRead && (a.ReadAt.IsZero() || ev.At.Before(a.ReadAt)) {
		a.ReadAt = ev.At
	}
}
