package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The customer service window. Like Meta, the sandbox keeps one per
// (business number, person), in one record (windows): a person opens it by
// writing to the number — an answer the sandbox posted itself
// (WebhookOptions.Reply, Stop, StopButton), one a test posted and told it
// of (NoteInbound), or one wasend's database held when the sandbox started
// (Options.Wrote). Two things read it: with Options.ServiceWindow, a
// free-form (text) message from a number whose window with the recipient
// is not open is refused with 131047; and a utility template inside it is
// priced free_customer_service.

// answerAfter is how long after our message the sandbox's answers are
// dated (their webhook timestamp).
const answerAfter = 45 * time.Second

// windows is who wrote to which number, when. It has its own lock: the
// send path reads it under Server.mu, the webhooks' plans write it. A
// message dated after now (an answer planned, not yet posted) waits in
// later and opens its window once its time comes.
type windows struct {
	mu    sync.Mutex
	now   func() time.Time
	wrote map[string]campaign.Wrote // wa_id (digits, or a user id) → number → last message
	later []wrote                   // in the order noted: about the order of their times
}

type wrote struct {
	who, number string
	at          time.Time
}

func newWindows(now func() time.Time, seed map[string]campaign.Wrote) *windows {
	w := &windows{now: now, wrote: map[string]campaign.Wrote{}}
	for who, byNumber := range seed {
		for number, at := range byNumber {
			// As wasend holds them, whatever their date: it counts a
			// window from the sandbox's answers at once.
			w.noteLocked(wrote{strings.TrimPrefix(who, "+"), number, at})
		}
	}
	return w
}

// note records that who wrote to the number phoneNumberID at at.
func (w *windows) note(who, phoneNumberID string, at time.Time) {
	m := wrote{strings.TrimPrefix(who, "+"), phoneNumberID, at}
	w.mu.Lock()
	defer w.mu.Unlock()
	if at.After(w.now()) {
		w.later = append(w.later, m)
		return
	}
	w.noteLocked(m)
}

func (w *windows) noteLocked(m wrote) {
	if w.wrote[m.who] == nil {
		w.wrote[m.who] = campaign.Wrote{}
	}
	w.wrote[m.who].Note(m.number, m.at)
}

// open reports whether who's window with the number is open at now, and
// when they last wrote to it by then (zero: never).
func (w *windows) open(who, phoneNumberID string, now time.Time) (bool, time.Time) {
	w.mu.Lock()
	for len(w.later) > 0 && !w.later[0].at.After(now) {
		w.noteLocked(w.later[0])
		w.later = w.later[1:]
	}
	last := w.wrote[strings.TrimPrefix(who, "+")][phoneNumberID]
	w.mu.Unlock()
	return campaign.WindowOpen(last, now), last
}

// NoteInbound records that the person waID (digits, E.164 or a user id)
// wrote to the number phoneNumberID at at: a message posted to wasend by
// other means than the sandbox's own answers.
func (s *Server) NoteInbound(waID, phoneNumberID string, at time.Time) {
	s.windows.note(waID, phoneNumberID, at)
}

// outsideWindowLocked returns the refusal of a text message from the
// number phoneNumberID to waID at now when its window is not open ("" when
// it may go).
func (s *Server) outsideWindowLocked(msg inMessage, phoneNumberID, waID string, now time.Time) string {
	if !s.serviceWindow || msg.Type != "text" {
		return ""
	}
	open, last := s.windows.open(waID, phoneNumberID, now)
	if open {
		return ""
	}
	why := "never wrote to this number"
	if !last.IsZero() {
		why = "last wrote to this number " + last.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("Re-engagement message: more than 24 hours have passed since the recipient last replied to the sender number (sandbox: %s)", why)
}
