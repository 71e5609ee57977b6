package driver

import (
	"errors"
	"time"

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

// ErrNoZones is returned when a send window is set on a campaign imported
// without one: its rows have no time zones to judge the window by.
var ErrNoZones = errors.New("no time zones stored")

// LiveRunner is how recently a runner must have beaten to count as alive
// for a driver's RemoveAccount and DeleteCampaign. Runners beat every 2 s;
// a runner silent this long is gone (or hung) and holds nothing back.
const LiveRunner = 30 * time.Second

// ImportBatch is how many rows an Importer's AddBatch and SkipBatch put
// in one INSERT. Each statement through database/sql and cgo costs about
// as much as storing a few rows; past a few hundred rows per statement
// nothing more is gained.
const ImportBatch = 256

// UpgradedThroughput is webhook.UpgradedThroughput (no driver imports the
// webhook package): a number's msg/s after THROUGHPUT_UPGRADE.
const UpgradedThroughput = 1000

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
