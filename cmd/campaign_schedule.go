package cmd

import (
	"errors"
	"strings"
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
	fl.StringVar(&o.At, "at", "", "start no earlier than this: +2h, 09:00 (the next), tomorrow 09:00, mon 09:00, 2026-12-01T09:00 (wall clocks in $WASEND_TZ, else local), or RFC 3339")
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
		sc.StartAt, sc.StartArg = t, strings.TrimSpace(o.At)
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

// shareOptions are the flags that say how a campaign shares the accounts
// with other campaigns, on run, import and campaign set.
type shareOptions struct {
	Priority string
	Weight   int
	Borrow   string
}

func addShareFlags(fl *pflag.FlagSet, o *shareOptions) {
	fl.StringVar(&o.Priority, "priority", "", "high, normal or low: a higher priority takes every token while it has rows to send (default normal)")
	fl.IntVar(&o.Weight, "weight", 0, "share of its priority's tokens next to other campaigns (default 1)")
	fl.StringVar(&o.Borrow, "borrow", "", "a high-priority campaign may go this long of an account's rate ahead of its bucket, at most its burst (default 2s; 0 for none)")
}

// change checks the flags; nil fields leave a campaign's share as it is.
func (o shareOptions) change() (campaign.ShareChange, error) {
	var ch campaign.ShareChange
	if o.Priority != "" {
		p, err := campaign.ParsePriority(o.Priority)
		if err != nil {
			return ch, usagef("--priority: %v", err)
		}
		ch.Priority = &p
	}
	if o.Weight != 0 {
		if o.Weight < 1 || o.Weight > 1000 {
			return ch, usagef("--weight %d: must be between 1 and 1000", o.Weight)
		}
		ch.Weight = &o.Weight
	}
	if o.Borrow != "" {
		d, err := time.ParseDuration(o.Borrow)
		if err != nil || d < 0 {
			return ch, usagef("--borrow %q: want a duration like 2s (0 for none)", o.Borrow)
		}
		ch.Borrow = &d
	}
	return ch, nil
}
