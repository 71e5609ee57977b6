package campaign

import (
	"fmt"
	"time"
)

// DefaultMaxHeld is how many of a campaign's sends may be held for quality
// assessment (template pacing) before it stops adding sends of its
// template (--max-held). Meta holds a paced template's sends past an
// unpublished threshold and then releases or drops them all together on
// early feedback; every send added meanwhile joins the same fate. 100 is
// a second of a number at 80 msg/s: enough that a few held sends of a
// healthy template do not stall a run, few enough that a dropped template
// costs a hundred recipients rather than the list. 0 never stops.
const DefaultMaxHeld = 100

// HeldLookAgain is how often a campaign stopped for held sends looks
// again (statuses settle them within minutes to an hour): a claim reads a
// kept count, so looking often costs little and resumes at once.
const HeldLookAgain = 2 * time.Second

// HeldStop is the claim's answer for a campaign with held of its sends
// held and --max-held max: nil while it may add sends, else the wait that
// says why, until the next look.
func HeldStop(held, max int, now time.Time) *WaitError {
	if max <= 0 || held < max {
		return nil
	}
	return &WaitError{Reason: WaitHeld, Until: now.Add(HeldLookAgain),
		Detail: fmt.Sprintf("%d sends held for quality assessment, --max-held %d", held, max)}
}
