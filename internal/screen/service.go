package screen

import (
	"context"
	"time"
)

// Window is the customer service window's rule at import: a free-form
// (text) message goes only to numbers that wrote within
// campaign.ServiceWindow before Now. The claim checks it again before each
// send (internal/claim), since a window may close in between.
type Window struct {
	Now time.Time
	// Last returns when each of phones last wrote (absent: never).
	Last func(ctx context.Context, phones []string) (map[string]time.Time, error)
}
