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
}

func addScheduleFlags(fl *pflag.FlagSet, o *scheduleOptions) {
	fl.StringVar(&o.At, "at", "", "start no earlier than this: +2h, a local time 2026-12-01T09:00 (in $WASEND_TZ), or RFC 3339")
	fl.StringVar(&o.ExpireAfter, "expire-after", "", "rows not sent within this long of the campaign's start become expired, e.g. 48h")
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
