package driver

import (
	"errors"

	"github.com/wasend/wasend/internal/campaign"
)

// ErrExists is returned when a name is already taken.
var ErrExists = errors.New("already exists")

// ErrNumberTaken is returned when a phone-number id already belongs to
// another account.
var ErrNumberTaken = errors.New("already in use")

// ErrInUse is returned when a running wasend still needs what the operator
// wants to remove or delete.
var ErrInUse = errors.New("in use by a running wasend")

// DefaultMargin is the share of a portfolio's messaging limit kept back
// unless --margin says otherwise.
const DefaultMargin = 0.05

// PortfolioChange is a partial update of a portfolio; nil fields stay.
type PortfolioChange struct {
	PinnedLimit *int // 0 removes the pin
	Margin      *float64
}

// Apply makes the change to p and checks the result.
func (ch PortfolioChange) Apply(p *campaign.Portfolio) error {
	if ch.PinnedLimit != nil {
		p.PinnedLimit = *ch.PinnedLimit
	}
	if ch.Margin != nil {
		p.Margin = *ch.Margin
	}
	return p.Validate()
}

// SyncMark is how far a copy of shared state has been applied: the
// source's epoch and the version of its last change applied.
type SyncMark struct {
	Epoch   string
	Version int64
}

// Push is a number this host listed itself, waiting to go on the list
// several hosts share.
type Push struct {
	campaign.Suppression
	// IfUnknown: list it there only if that list has never known the
	// number (listed or removed). Set for numbers listed by hand and those
	// listed before the outbox existed; an opt-out the API reported goes
	// up whatever the shared list knew.
	IfUnknown bool
	Seq       int64 // its place in the outbox, for Pushed
}

// Sibling is an earlier campaign with the same message as an import.
type Sibling struct {
	Campaign campaign.Campaign
	// RecipientsKey identifies its recipient set; "" for campaigns
	// imported before keys were stored (see EachNumber).
	RecipientsKey string
}
