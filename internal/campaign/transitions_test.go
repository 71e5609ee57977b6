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
		if legal(Sent, to) {
			t.Errorf("sent → %s is legal: a double send", to)
		}
	}
	for tr, r := range Transitions {
		if r.To == Pending && slices.Contains(tr.From(), Sent) && !slices.Contains(SentBack, tr) {
			t.Errorf("%s moves sent → pending and is not one of SentBack: a double send", tr)
		}
	}
}

// TestDeliveryLadder: Rank follows the ladder's order, and a status off the
// ladder has none.
func TestDeliveryLadder(t *testing.T) {
	want := []Delivery{DeliveryHeld, DeliverySent, DeliveryDelivered, DeliveryRead, DeliveryFailed}
	for i, d := range want {
		if got := d.Rank(); got != i+1 {
			t.Errorf("%s.Rank() = %d, want %d", d, got, i+1)
		}
	}
	for _, d := range []Delivery{"", "played", "deleted"} {
		if d.Rank() != 0 || d.Received() {
			t.Errorf("%q: rank %d, received %v; want 0, false", d, d.Rank(), d.Received())
		}
	}
	for d, want := range map[Delivery]bool{DeliveryHeld: false, DeliverySent: false, DeliveryDelivered: true, DeliveryRead: true, DeliveryFailed: false} {
		if d.Received() != want {
			t.Errorf("%s.Received() = %v, want %v", d, d.Received(), want)
		}
	}
	// Held is the send's answer's, never a webhook's.
	if DeliveryHeld.Reported() || !DeliverySent.Reported() || Delivery("played").Reported() {
		t.Errorf("Reported: held %v, sent %v, played %v; want false, true, false",
			DeliveryHeld.Reported(), DeliverySent.Reported(), Delivery("played").Reported())
	}
	if last := DeliveryLadder[len(DeliveryLadder)-1]; last.Delivery != DeliveryFailed || last.Received {
		t.Errorf("the ladder ends at %+v; want failed, final and not received", last)
	}
}

// legal reports whether some transition moves a row from one state to
// another.
func legal(from, to State) bool {
	for _, r := range Transitions {
		if r.To == to && slices.Contains(r.From, from) {
			return true
		}
	}
	return false
}
