package planner

import (
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Group is the recipients of a campaign that share their time zones: a
// send window opens and closes for all of them at once.
type Group struct {
	Zones    []*time.Location
	Messages int
}

// window is the state of a forecast with a send window: the messages
// left in each group, and which groups are open in the current minute
// (windows open and close on whole minutes, so that is cached).
type window struct {
	w      campaign.Window
	groups []Group
	minute time.Time
	open   []int // groups open in minute with messages left
}

func newWindow(w campaign.Window, groups []Group) *window {
	return &window{w: w, groups: append([]Group(nil), groups...)}
}

// openAt returns the groups with messages left whose window is open at t.
func (win *window) openAt(t time.Time) []int {
	m := t.Truncate(time.Minute)
	if !m.Equal(win.minute) || win.open == nil {
		win.minute, win.open = m, win.open[:0]
		for i, g := range win.groups {
			if g.Messages > 0 && win.w.Open(t, g.Zones) {
				win.open = append(win.open, i)
			}
		}
	}
	return win.open
}

// take sends one message of an open group.
func (win *window) take() {
	i := win.open[0]
	win.groups[i].Messages--
	if win.groups[i].Messages == 0 {
		win.open = win.open[1:]
	}
}

// next is the first instant after t when a group with messages left
// opens; false when none ever does.
func (win *window) next(t time.Time) (time.Time, bool) {
	var best time.Time
	for _, g := range win.groups {
		if g.Messages == 0 {
			continue
		}
		if at, ok := win.w.Next(t, g.Zones); ok && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	return best, !best.IsZero()
}

// waitForWindow moves s.t to the next opening (at most the day's end)
// when no recipient's window is open now, and reports whether it did.
func (s *sim) waitForWindow() bool {
	if s.win == nil || len(s.win.openAt(s.t)) > 0 {
		return false
	}
	next, ok := s.win.next(s.t)
	if !ok {
		s.reason = "the send window never opens for the recipients left"
		s.t = s.dayEnd
		return true
	}
	s.t = next
	if s.dayEnd.Before(next) {
		s.t = s.dayEnd
	}
	return true
}
