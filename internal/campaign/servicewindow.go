package campaign

import (
	"fmt"
	"time"
)

// The customer service window (issue 27 item 5): a message from a person
// opens a window of ServiceWindow in which a business may send them
// free-form messages; outside it the Cloud API refuses them (131047,
// "re-engagement message") and only templates go. Meta keeps the window
// per (business number, person), and so does wasend: the inbound messages
// it stores say when each person last wrote to each of its numbers
// (Wrote), and a free-form message goes only from a number whose window
// is open. The sandbox keeps its own record the same way.

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

// Wrote is when a person last wrote to each business number, by the
// number's phone number id: one window per number.
type Wrote map[string]time.Time

// Note records a message to number at at (an earlier one changes nothing).
func (w Wrote) Note(number string, at time.Time) {
	if at.After(w[number]) {
		w[number] = at
	}
}

// Open reports whether a free-form message may go to the person from
// number at now.
func (w Wrote) Open(number string, now time.Time) bool { return WindowOpen(w[number], now) }

// Last is the person's latest message to any number: which, and when
// (zero: never).
func (w Wrote) Last() (number string, at time.Time) {
	for n, t := range w {
		if t.After(at) || (t.Equal(at) && n < number) {
			number, at = n, t
		}
	}
	return number, at
}

// NoWindowReasonFrom says why a free-form message cannot go to a person
// who wrote as w says from any of numbers (the ones a campaign sends
// from): NoWindowReason of their latest message to one of them, unless a
// window is open with another number only, which it names.
func NoWindowReasonFrom(w Wrote, numbers []string, now time.Time) string {
	var mine Wrote
	for _, n := range numbers {
		if at, ok := w[n]; ok {
			if mine == nil {
				mine = Wrote{}
			}
			mine[n] = at
		}
	}
	_, last := mine.Last()
	if other, at := w.Last(); WindowOpen(at, now) {
		return fmt.Sprintf("%slast message from them %s to number %s, which does not send this campaign (a window is open with that number only); --ignore-window sends anyway",
			NoWindowPrefix, at.UTC().Format(time.RFC3339), other)
	}
	return NoWindowReason(last)
}
