package campaign

import "time"

// NextQuotaDay is when the calendar day after now's begins in loc, the time
// zone of quota days: the earliest a plain `wasend quota reset` (as cron
// runs it) starts a new one once today's has been started.
func NextQuotaDay(now time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.Local
	}
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// CappedHint says what makes a campaign that waits on every account's
// daily cap go on: a plain `wasend quota reset` changes nothing on the day
// it already ran, so the hint names when the next quota day opens, and the
// --force that starts one now, ending with flags (the global flags that
// reach the same database, each with its leading space).
func CappedHint(now time.Time, loc *time.Location, flags string) string {
	next := NextQuotaDay(now, loc)
	return "every account reached its daily cap; next quota day from " + next.Format("01-02 15:04 MST") +
		" (when cron's `wasend quota reset` runs), or now with `wasend quota reset --force" + flags + "`"
}
