package pricing

import (
	"errors"
	"fmt"
	"time"
)

// ErrCardOverlap is Fits's refusal of a card whose dates overlap another
// card of its currency.
var ErrCardOverlap = errors.New("overlaps another card's dates")

// Fits is nil when card c may join cards (those imported before): its
// dates overlap none of its currency's; else an error naming the card it
// overlaps (ErrCardOverlap).
func Fits(cards []Card, c Card) error {
	a, b, found := Overlap(append(cards, c))
	if !found {
		return nil
	}
	other := a
	if other.ID == 0 {
		other = b
	}
	until := ""
	if !other.Until.IsZero() {
		until = " until " + Day(other.Until)
	}
	return fmt.Errorf("%s: the %s card from %s %w: card %d (from %s%s)", c.Source, c.Currency, Day(c.Effective),
		ErrCardOverlap, other.ID, Day(other.Effective), until)
}

// Day is a card's day as the database keeps it: YYYY-MM-DD in UTC, ""
// for none (ParseDay reads it back).
func Day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// ParseDay reads a day Day wrote; "" (or anything else) is none.
func ParseDay(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}
