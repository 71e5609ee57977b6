package doctor

import (
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/whatsapp"
)

// graphReleases are the Graph API versions wasend knows, with the day each
// was released (Meta's changelog; docs/cloud-api.md#api-versions). A
// version stops working two years after the next one's release.
var graphReleases = []struct {
	version  string
	released string
}{
	{"v19.0", "2024-01-23"},
	{"v20.0", "2024-05-21"},
	{"v21.0", "2024-10-02"},
	{"v22.0", "2025-01-21"},
	{"v23.0", "2025-05-29"},
	{"v24.0", "2025-10-08"},
	{"v25.0", ""}, // the default; released after v24.0, its successor not yet known
}

// versionWarning is how long before its end a version is warned about.
const versionWarning = 90 * 24 * time.Hour

func (c Config) version() string {
	if c.Version != "" {
		return c.Version
	}
	return whatsapp.DefaultVersion
}

// versionEnd is the day version stops working, zero when not yet known
// (no successor released), and whether wasend knows the version at all.
func versionEnd(version string) (time.Time, bool) {
	for i, r := range graphReleases {
		if r.version != version {
			continue
		}
		if i+1 == len(graphReleases) || graphReleases[i+1].released == "" {
			return time.Time{}, true
		}
		next, _ := time.Parse(time.DateOnly, graphReleases[i+1].released)
		return next.AddDate(2, 0, 0), true
	}
	return time.Time{}, false
}

func checkAPIVersion(c Config) Finding {
	v := c.version()
	check := "API version"
	end, known := versionEnd(v)
	fix := fmt.Sprintf("set WASEND_API_VERSION to a newer version, or unset it for wasend's (%s)", whatsapp.DefaultVersion)
	if v == whatsapp.DefaultVersion {
		fix = "upgrade wasend, whose newer releases call a newer version"
	}
	switch {
	case !known:
		return Finding{Check: check, Level: Warn, Summary: v + ": not known to wasend",
			Details: []string{"its end date is unknown; wasend was tested with " + whatsapp.DefaultVersion}}
	case end.IsZero():
		return Finding{Check: check, Level: OK, Summary: v + ", the newest wasend knows: no end date yet"}
	}
	left := end.Sub(c.Now())
	summary := fmt.Sprintf("%s: works until %s", v, end.Format(time.DateOnly))
	switch {
	case left <= 0:
		return Finding{Check: check, Level: Fail, Summary: fmt.Sprintf("%s: stopped working on %s", v, end.Format(time.DateOnly)),
			Details: []string{"Meta answers its calls as the oldest version still working; " + fix}}
	case left < versionWarning:
		return Finding{Check: check, Level: Warn, Summary: summary,
			Details: []string{fmt.Sprintf("%d days left; %s", int(left.Hours()/24), fix)}}
	}
	return Finding{Check: check, Level: OK, Summary: summary}
}
