package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Open is a campaign's open rows as an ETA starts from them.
type Open struct {
	Messages int
	// Begin: nothing is sent before it — the campaign's start (--at), or
	// the first retry time when no row is due before that. Zero: now.
	Begin time.Time
	// Window, when set, sends Groups only while their recipients' window
	// is open; Messages is then their sum. A group without zones (rows
	// imported before the campaign had a window) is always open.
	Window *campaign.Window
	Groups []Group
}

// Limits is what sends a campaign's open rows: the accounts as the store
// reports them (leave out the ones dropped from the campaign; disabled ones
// are left out here), the global bucket at the ETA's now (nil when it is
// off) and the portfolios' messaging limits.
type Limits struct {
	Accounts    []campaign.AccountStatus
	Global      *ratelimit.Bucket
	GlobalLimit ratelimit.Limit
	Portfolios  []PortfolioState
}

// ETA is the one estimate of when a campaign finishes, for every surface
// that shows one (the progress line, status, campaign list and show): the
// scheduler's rules on a simulated clock from now, with the campaign's
// start, its send window and every limit counted. The forecast's Start is
// now, so its Duration is the time left and QuotaResets the midnights
// until the finish, the ones before Begin included; Begin is when the
// first message can go.
func ETA(now time.Time, loc *time.Location, open Open, l Limits) (Forecast, error) {
	in := Input{Start: now, Location: loc, Messages: open.Messages, Global: l.Global, GlobalLimit: l.GlobalLimit, Portfolios: l.Portfolios}
	begin := now
	if open.Begin.After(now) {
		begin = open.Begin
	}
	for _, a := range l.Accounts {
		if a.Disabled {
			continue
		}
		s := FromStatus(a)
		// Every account is held back until the campaign may begin: its
		// bucket fills meanwhile, and the quota days that pass start again.
		if begin.After(s.NotBefore) {
			s.NotBefore = begin
		}
		in.Accounts = append(in.Accounts, s)
	}
	if open.Window != nil {
		in.Window, in.Groups, in.Messages = open.Window, open.Groups, 0
		for _, g := range open.Groups {
			in.Messages += g.Messages
		}
	}
	f, err := Plan(in)
	if err != nil {
		return f, err
	}
	f.Begin = begin
	return f, nil
}

// Groups turns counts of recipients by their time zones (comma-separated
// IANA names, as the import stores and the recipient check gives them;
// "" for rows with no zone, always in their window) into the groups a
// forecast with a send window takes, in an order that does not depend on
// the map's.
func Groups(zones map[string]int) ([]Group, error) {
	var out []Group
	for names, n := range zones {
		g := Group{Messages: n}
		if names != "" {
			locs, err := campaign.LoadZones(names)
			if err != nil {
				return nil, fmt.Errorf("recipients' time zones %q: %w", names, err)
			}
			g.Zones = locs
		}
		out = append(out, g)
	}
	// Map order must not change a forecast: groups open at once share the
	// tokens in this order.
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(zoneKey(a), zoneKey(b)) })
	return out, nil
}
