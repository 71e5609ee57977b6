package campaign

import "time"

// InboundMessage is one entry of a messages webhook's messages[]: what a
// person sent to one of the business numbers (docs/cloud-api.md#inbound-messages).
type InboundMessage struct {
	WAMID string // messages[].id
	From  string // messages[].from: the person's number without '+'; "" when Meta left it out
	// UserID is the sender's business-scoped user id (messages[].from_user_id
	// or contacts[].user_id); a person with a username may have no From.
	UserID        string
	At            time.Time // messages[].timestamp
	Type          string    // text, button, interactive, reaction, image, …, as Meta names it
	Text          string    // text.body, button.text, a reply's title, a caption, a reaction's emoji
	Payload       string    // button.payload, or the id of an interactive reply
	ContextID     string    // context.id (or reaction.message_id): the message of ours it answers
	PhoneNumberID string    // metadata.phone_number_id: the business number it reached
	Name          string    // contacts[].profile.name of the sender
	// Unknown marks a message whose type or shape wasend does not read:
	// it is kept (Raw) and counted, never refused.
	Unknown bool
	Raw     string // the message object as received, kept for unknown ones
}

// InboundKind is what an inbound message means beyond being an answer.
type InboundKind string

const (
	InboundPlain  InboundKind = ""        // an answer, nothing more
	InboundOptOut InboundKind = "opt-out" // the number is suppressed at once
	InboundOptIn  InboundKind = "opt-in"  // listed for the operator; lifts nothing by itself
)

// InboundMeaning is what the rules decided an inbound message means.
type InboundMeaning struct {
	Kind InboundKind
	// Answers: the person wrote (or tapped, or reacted); a reply when it
	// follows a message of ours. A marketing preference changed in the
	// app is not an answer.
	Answers bool
	// Reason is what suppress list shows for an opt-out (keyword "STOP",
	// opt-out button) and what an opt-in said.
	Reason string
}
