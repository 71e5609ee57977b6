package campaign

import (
	"slices"
	"testing"
)

func TestTransitionTable(t *testing.T) {
	if len(AllTransitions) != len(Transitions) {
		t.Fatalf("AllTransitions lists %d moves, the table has %d", len(AllTransitions), len(Transitions))
	}
	names := map[string]bool{}
	for _, tr := range AllTransitions {
		r, ok := Transitions[tr]
		if !ok {
			t.Fatalf("transition %d is not in the table", tr)
		}
		if r.Name == "" || r.Why == "" || len(r.From) == 0 || r.To == "" {
			t.Errorf("%s: incomplete row %+v", tr, r)
		}
		if names[r.Name] {
			t.Errorf("two transitions are named %q", r.Name)
		}
		names[r.Name] = true
		for _, f := range r.From {
			if f == r.To {
				t.Errorf("%s: moves %s to itself", tr, f)
			}
		}
	}
	// A sent row was accepted by the Cloud API: nothing may make it
	// claimable again, or the recipient gets the message twice — but for
	// the moves that carry proof it was not delivered (SentBack).
	for _, to := range []State{Sending, Unknown} {
		if Legal(Sent, to) {
			t.Errorf("sent → %s is legal: a double send", to)
		}
	}
	for tr, r := range Transitions {
		if r.To == Pending && tr.Allows(Sent) && !slices.Contains(SentBack, tr) {
			t.Errorf("%s moves sent → pending and is not one of SentBack: a double send", tr)
		}
	}
	tests := []struct {
		move   Transition
		column string
		from   string
		to     string
	}{
		{MoveClaim, "state", "state = 'pending'", "state = 'sending'"},
		{MoveRecordSent, "messages.state", "messages.state IN ('sending', 'unknown')", "state = 'sent'"},
		{MoveRequeueUnknown, "state", "state = 'unknown'", "state = 'pending'"},
	}
	for _, tc := range tests {
		if got := tc.move.FromSQL(tc.column); got != tc.from {
			t.Errorf("%s.FromSQL = %q, want %q", tc.move, got, tc.from)
		}
		if got := tc.move.ToSQL(); got != tc.to {
			t.Errorf("%s.ToSQL = %q, want %q", tc.move, got, tc.to)
		}
	}
}
