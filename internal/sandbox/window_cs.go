package sandbox

import (
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// The customer service window (Options.ServiceWindow): like Meta, the
// sandbox refuses a free-form (text) message with 131047 unless the
// recipient wrote within campaign.ServiceWindow — an answer the sandbox
// posted itself (WebhookOptions.Reply, Stop, StopButton), or one a test
// posted and told it of (NoteInbound). The window is kept per recipient,
// as wasend keeps it.

// answerAfter is how long after our message the sandbox's answers are
// dated (their webhook timestamp).
const answerAfter = 45 * time.Second

// NoteInbound records that the recipient waID (digits, or E.164) wrote at
// at: a message posted to wasend by other means than the sandbox's own
// answers.
func (s *Server) NoteInbound(waID string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteWroteLocked(waIDOf(waID), at)
}

func waIDOf(to string) string {
	if len(to) > 0 && to[0] == '+' {
		return to[1:]
	}
	return to
}

func (s *Server) noteWroteLocked(waID string, at time.Time) {
	if s.wrote == nil {
		s.wrote = map[string]time.Time{}
	}
	if at.After(s.wrote[waID]) {
		s.wrote[waID] = at
	}
}

// noteAnswerLocked records the answer the webhooks planned for the message
// wamid, if any, as the recipient writing.
func (s *Server) noteAnswerLocked(wamid, waID string, now time.Time) {
	h := s.hooks
	if h == nil {
		return
	}
	h.mu.Lock()
	d := h.deliveries[wamid]
	answered := d != nil && d.Answer != ""
	h.mu.Unlock()
	if answered {
		s.noteWroteLocked(waID, now.Add(answerAfter))
	}
}

// outsideWindowLocked returns the refusal of a text message to waID at now
// when its window is not open ("" when it may go).
func (s *Server) outsideWindowLocked(msg inMessage, waID string, now time.Time) string {
	if !s.serviceWindow || msg.Type != "text" {
		return ""
	}
	last, ok := s.wrote[waID]
	if ok && !now.Before(last) && campaign.WindowOpen(last, now) {
		return ""
	}
	return fmt.Sprintf("Re-engagement message: more than 24 hours have passed since the recipient last replied to the sender number (sandbox: %s)",
		map[bool]string{true: "last wrote " + last.UTC().Format(time.RFC3339), false: "never wrote"}[ok])
}
