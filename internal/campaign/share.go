package campaign

import (
	"fmt"
	"strings"
	"time"
)

// Priority is a campaign's class when campaigns share accounts: a higher
// class gets every token while it has rows to send.
type Priority int

// The classes; Normal is the zero value.
const (
	Low    Priority = -1
	Normal Priority = 0
	High   Priority = 1
)

func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case High:
		return "high"
	}
	return "normal"
}

// ParsePriority reads high, normal or low.
func ParsePriority(s string) (Priority, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "high":
		return High, nil
	case "normal":
		return Normal, nil
	case "low":
		return Low, nil
	}
	return Normal, fmt.Errorf("priority %q: want high, normal or low", s)
}

// DefaultBorrow is how far ahead of an account's bucket a high-priority
// campaign may go by default: two seconds of the account's rate.
const DefaultBorrow = 2 * time.Second

// Share is how a campaign shares the accounts with other campaigns.
type Share struct {
	Priority Priority
	// Weight is the campaign's share of its class's tokens (≥ 1).
	Weight int
	// Borrow: a high campaign may take this long of an account's rate
	// (at most its burst) ahead of the bucket; 0: no borrowing.
	Borrow time.Duration
}

// DefaultShare is a new campaign's share without flags.
var DefaultShare = Share{Priority: Normal, Weight: 1, Borrow: DefaultBorrow}

// ShareChange changes some of a campaign's Share: nil fields stay.
type ShareChange struct {
	Priority *Priority
	Weight   *int
	Borrow   *time.Duration
}

// IsZero reports whether the change changes nothing.
func (c ShareChange) IsZero() bool { return c.Priority == nil && c.Weight == nil && c.Borrow == nil }

// Apply returns s with the change made.
func (c ShareChange) Apply(s Share) Share {
	if c.Priority != nil {
		s.Priority = *c.Priority
	}
	if c.Weight != nil {
		s.Weight = *c.Weight
	}
	if c.Borrow != nil {
		s.Borrow = *c.Borrow
	}
	return s
}

// Validate reports a share that cannot work.
func (s Share) Validate() error {
	switch {
	case s.Weight < 1 || s.Weight > 1000:
		return fmt.Errorf("weight %d: must be between 1 and 1000", s.Weight)
	case s.Borrow < 0:
		return fmt.Errorf("borrow %v: must not be negative", s.Borrow)
	}
	return nil
}
