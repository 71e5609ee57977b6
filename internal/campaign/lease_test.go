package campaign

import (
	"errors"
	"testing"
)

func TestExpire(t *testing.T) {
	tests := []struct {
		state   State
		started bool
		want    Transition
		ok      bool
	}{
		{Sending, false, MoveLapse, true},
		{Sending, true, MoveRescue, true},
		{Pending, false, 0, false},
		{Sent, true, 0, false},
		{Unknown, true, 0, false},
		{Failed, false, 0, false},
	}
	for _, tt := range tests {
		got, ok := Expire(tt.state, tt.started)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Expire(%s, started %v) = %s, %v; want %s, %v", tt.state, tt.started, got, ok, tt.want, tt.ok)
		}
		if !ok {
			continue
		}
		// The move is legal from the row's state, and never resends a row
		// whose request may have started.
		if r := Transitions[got]; len(r.From) != 1 || r.From[0] != tt.state {
			t.Errorf("%s does not move a %s row", got, tt.state)
		}
		if tt.started && got.To() == Pending {
			t.Errorf("a started request's row goes back to pending on expiry: a double send")
		}
	}
}

func TestFenced(t *testing.T) {
	for _, tr := range AllTransitions {
		// Every move out of Sending but the claim's own expiry is a write
		// of the claim's holder, so it is fenced.
		fromSending := false
		for _, s := range tr.From() {
			fromSending = fromSending || s == Sending
		}
		expiry := tr == MoveLapse || tr == MoveRescue
		if want := fromSending && !expiry; Fenced(tr) != want {
			t.Errorf("Fenced(%s) = %v, want %v", tr, Fenced(tr), want)
		}
	}
	if !FenceOK(7, 7) || FenceOK(7, 8) || FenceOK(8, 7) {
		t.Error("a fence matches only its own claim")
	}
	if err := error(&FenceError{Rows: []int64{1}}); !errors.Is(err, ErrFenced) {
		t.Errorf("%v is not ErrFenced", err)
	}
}
