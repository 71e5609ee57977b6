package cmd

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
)

// scheduleOptions are the flags that say when a campaign may send, shared
// by run and import.
type scheduleOptions struct {
	At          string
	ExpireAfter string
	SendWindow  string
	Days        string
	DefaultTZ   string
}

func addScheduleFlags(fl *pflag.FlagSet, o *scheduleOptions) {
	fl.StringVar(&o.At, "at", "", "start no earlier than this: +2h, a local time 2026-12-01T09:00 (in $WASEND_TZ), or RFC 3339")
	fl.StringVar(&o.ExpireAfter, "expire-after", "", "rows not sent within this long of the campaign's start become expired, e.g. 48h")
	fl.StringVar(&o.SendWindow, "send-window", "", "send only between these hours of each recipient's local time, e.g. 09:00-20:00")
	fl.StringVar(&o.Days, "days", "", "with --send-window: the days it opens, e.g. mon-fri (default every day)")
	fl.StringVar(&o.DefaultTZ, "default-tz", "", "with --send-window: the IANA zone of numbers whose zone is not known (no tz column, no zone for the number)")
}

// schedule checks the flags; its zero fields leave a campaign's stored
// schedule as it is.
func (o scheduleOptions) schedule(f *Factory) (campaign.Schedule, error) {
	var sc campaign.Schedule
	if o.At != "" {
		t, err := campaign.ParseAt(o.At, f.Now(), f.location())
		if err != nil {
			return sc, usagef("--at %v", err)
		}
		sc.StartAt = t
	}
	if o.ExpireAfter != "" {
		d, err := parsePositiveDuration(o.ExpireAfter)
		if err != nil {
			return sc, usagef("--expire-after %q: %v", o.ExpireAfter, err)
		}
		sc.ExpireAfter = d
	}
	if o.SendWindow == "" {
		if o.Days != "" || o.DefaultTZ != "" {
			return sc, usagef("--days and --default-tz go with --send-window")
		}
		return sc, nil
	}
	w, err := campaign.ParseWindow(o.SendWindow, o.Days)
	if err != nil {
		return sc, usagef("--send-window: %v", err)
	}
	sc.Window = &w
	if o.DefaultTZ != "" {
		if _, err := campaign.LoadZone(o.DefaultTZ); err != nil {
			return sc, usagef("--default-tz: %v", err)
		}
		sc.DefaultTZ = o.DefaultTZ
	}
	return sc, nil
}

// parsePositiveDuration reads a Go duration that must be above zero.
func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, errors.New("want a duration like 48h or 90m")
	case d <= 0:
		return 0, errors.New("must be more than zero")
	}
	return d, nil
}
