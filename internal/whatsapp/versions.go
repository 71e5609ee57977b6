package whatsapp

import (
	"fmt"
	"time"
)

// APIVersion is one Graph API version as Meta's changelog lists it: the
// day it was released and the last day it works ("available until"),
// zero while Meta has not set one (docs/cloud-api.md#api-versions).
type APIVersion struct {
	Name     string
	Released time.Time
	Until    time.Time
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic("whatsapp: bad date in the version table: " + s)
	}
	return t
}

// Versions is the one table of Graph API versions wasend knows, oldest
// first; doctor and the start-up warning read it. Read from Meta's
// changelog (graph-api/changelog) on 2026-12-01: a version's end is the
// date Meta publishes, not a rule applied here.
var Versions = []APIVersion{
	{"v19.0", day("2024-01-23"), day("2026-05-21")},
	{"v20.0", day("2024-05-21"), day("2026-09-24")},
	{"v21.0", day("2024-10-02"), day("2027-01-21")},
	{"v22.0", day("2025-01-21"), day("2027-05-20")},
	{"v23.0", day("2025-05-29"), day("2027-10-08")},
	{"v24.0", day("2025-10-08"), day("2028-02-18")},
	{"v25.0", day("2026-02-18"), day("2028-07-29")},
	{"v26.0", day("2026-07-29"), time.Time{}},
}

// DefaultVersion is the newest version in Versions: the one wasend is
// tested against and calls unless WASEND_API_VERSION says otherwise.
const DefaultVersion = "v26.0"

// PreviousVersion is the one before DefaultVersion, which the sandbox also
// serves so that a set-up pinned to it keeps working until its end.
const PreviousVersion = "v25.0"

// VersionWarning is how long before its end a version is warned about.
const VersionWarning = 90 * 24 * time.Hour

// LookupVersion returns the table's row for name.
func LookupVersion(name string) (APIVersion, bool) {
	for _, v := range Versions {
		if v.Name == name {
			return v, true
		}
	}
	return APIVersion{}, false
}

// VersionEndWarning is the one line any command prints (once, on stderr)
// when the configured version has ended or ends within VersionWarning of
// now; "" when it has no known end or ends later. An unknown version is
// left to doctor, which says so with its fix.
func VersionEndWarning(name string, now time.Time) string {
	if name == "" {
		name = DefaultVersion
	}
	v, ok := LookupVersion(name)
	if !ok || v.Until.IsZero() {
		return ""
	}
	// Meta's "available until" is the last day it works.
	end := v.Until.AddDate(0, 0, 1)
	left := end.Sub(now)
	switch {
	case left <= 0:
		return fmt.Sprintf("Graph API %s stopped working after %s: set WASEND_API_VERSION to %s, or unset it", name, v.Until.Format(time.DateOnly), DefaultVersion)
	case left < VersionWarning:
		return fmt.Sprintf("Graph API %s works until %s (%d days left): set WASEND_API_VERSION to %s, or unset it", name, v.Until.Format(time.DateOnly), int(left.Hours()/24), DefaultVersion)
	}
	return ""
}
