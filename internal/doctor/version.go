package doctor

import (
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/whatsapp"
)

func (c Config) version() string {
	if c.Version != "" {
		return c.Version
	}
	return whatsapp.DefaultVersion
}

// versionEnd is the day version stops working (the day after Meta's
// "available until"), zero when Meta has set none yet, and whether wasend
// knows the version at all. The table is whatsapp.Versions.
func versionEnd(version string) (time.Time, bool) {
	v, ok := whatsapp.LookupVersion(version)
	if !ok || v.Until.IsZero() {
		return time.Time{}, ok
	}
	return v.Until.AddDate(0, 0, 1), true
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
	summary := fmt.Sprintf("%s: works until %s", v, end.AddDate(0, 0, -1).Format(time.DateOnly))
	switch {
	case left <= 0:
		return Finding{Check: check, Level: Fail, Summary: fmt.Sprintf("%s: stopped working after %s", v, end.AddDate(0, 0, -1).Format(time.DateOnly)),
			Details: []string{"Meta answers its calls as the oldest version still working; " + fix}}
	case left < whatsapp.VersionWarning:
		return Finding{Check: check, Level: Warn, Summary: summary,
			Details: []string{fmt.Sprintf("%d days left; %s", int(left.Hours()/24), fix)}}
	}
	return Finding{Check: check, Level: OK, Summary: summary}
}
