package recipients

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/wasend/wasend/internal/campaign"
)

// Zones returns the time zones a send window is judged in for one
// recipient, comma-separated: tz (the file's tz column) when set, else
// the zones libphonenumber has for the number (a country or area code may
// span several; the window must be open in all of them), else fallback
// (--default-tz). The error says why there is none, or why tz is no zone.
func Zones(tz, phone, fallback string) (string, error) {
	if tz != "" {
		if _, err := campaign.LoadZone(tz); err != nil {
			return "", err
		}
		return tz, nil
	}
	found, err := phonenumbers.GetTimezonesForPrefix(phone)
	if err == nil {
		found = slices.DeleteFunc(slices.Clone(found), func(z string) bool {
			_, lerr := campaign.LoadZone(z)
			return z == phonenumbers.UNKNOWN_TIMEZONE || lerr != nil
		})
		if len(found) > 0 {
			slices.Sort(found)
			return strings.Join(slices.Compact(found), ","), nil
		}
	}
	if fallback != "" {
		return fallback, nil
	}
	return "", fmt.Errorf("no time zone known for %s: add a tz column (IANA name) or --default-tz", phone)
}
