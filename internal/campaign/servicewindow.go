package campaign

import (
	"fmt"
	"time"
)

// The customer service window (issue 27 item 5): a message from a person
// opens a window of ServiceWindow in which a business may send them
// free-form messages; outside it the Cloud API refuses them (131047,
// "re-engagement message") and only templates go. wasend keeps the window
// per person across its numbers: the inbound messages it stores say when
// each last wrote.

// ServiceWindow is how long after a person's last message free-form
// messages to them are allowed.
const ServiceWindow = 24 * time.Hour

// CodeNoWindow is the error code of a row skipped at sending because its
// recipient's customer service window had closed (or never opened).
// wasend's own, like CodeSuppressed: `campaign retry --code -3` selects
// these rows.
const CodeNoWindow = -3

// CodeReEngagement is the Cloud API's refusal of a free-form message
// outside the customer service window.
const CodeReEngagement = 131047

// NoWindowPrefix begins every reason a row is skipped for lack of a window.
const NoWindowPrefix = "no customer service window: "

// WindowOpen reports whether a person who last wrote at last (zero: never)
// may be sent a free-form message at now.
func WindowOpen(last, now time.Time) bool {
	return !last.IsZero() && now.Before(last.Add(ServiceWindow))
}

// WindowUntil is when the window opened by a message at last closes (zero
// when there was none).
func WindowUntil(last time.Time) time.Time {
	if last.IsZero() {
		return time.Time{}
	}
	return last.Add(ServiceWindow)
}

// NoWindowReason says why a free-form message cannot go to a person who
// last wrote at last (zero: never) — the same text at import and at
// sending.
func NoWindowReason(last time.Time) string {
	if last.IsZero() {
		return NoWindowPrefix + "never wrote; --ignore-window sends anyway"
	}
	return fmt.Sprintf("%slast message from them %s, the window closed %s; --ignore-window sends anyway", NoWindowPrefix,
		last.UTC().Format(time.RFC3339), WindowUntil(last).UTC().Format(time.RFC3339))
}
