package runner

import (
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
)

// zoneFinder gives each row of an import with a send window its time
// zones, and refuses a row whose window never opens in all of them at
// once (a number spanning zones too far apart for the window): it could
// never be sent.
type zoneFinder struct {
	sc    campaign.Schedule
	now   time.Time
	never map[string]bool // by zone set: the window never opens in all
}

func newZoneFinder(sc campaign.Schedule, now time.Time) *zoneFinder {
	return &zoneFinder{sc: sc, now: now, never: map[string]bool{}}
}

func (z *zoneFinder) of(row recipients.Row) (string, error) {
	zones, err := recipients.Zones(row.TZ, row.Phone, z.sc.DefaultTZ)
	if err != nil {
		return "", err
	}
	never, seen := z.never[zones]
	if !seen {
		locs, err := campaign.LoadZones(zones)
		if err != nil {
			return "", err
		}
		_, ok := z.sc.Window.Next(z.now, locs)
		never = !ok
		z.never[zones] = never
	}
	if never {
		return "", fmt.Errorf("send window %s is never open in all of the number's time zones (%s) at once: add a tz column", z.sc.Window, zones)
	}
	return zones, nil
}
