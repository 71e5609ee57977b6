package campaign

import "testing"

// A status found by its callback data (its wamid unknown here) must name
// the row's recipient: a number by recipient_id, a user id by
// recipient_user_id.
func TestStatusRecipientIs(t *testing.T) {
	for _, tt := range []struct {
		row       string
		recipient string
		userID    string
		want      bool
	}{
		{"+16505550000", "16505550000", "", true},
		{"+16505550000", "16505550000", "US.1", true},
		{"+16505550000", "16505550001", "", false},
		{"+16505550000", "", "US.1", true}, // no number to compare
		{"+16505550000", "", "", true},
		{"US.1", "", "US.1", true},
		{"US.1", "", "US.2", false},
		{"US.1", "16505550000", "", false},
		{"US.1", "US.1", "", true},
	} {
		ev := StatusEvent{Recipient: tt.recipient, RecipientUserID: tt.userID}
		if got := StatusRecipientIs(tt.row, ev); got != tt.want {
			t.Errorf("StatusRecipientIs(%q, recipient_id %q, recipient_user_id %q) = %v", tt.row, tt.recipient, tt.userID, got)
		}
	}
}
