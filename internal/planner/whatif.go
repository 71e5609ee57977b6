package planner

import (
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
)

// Outlook is a campaign's forecast and the what-ifs `campaign plan` shows
// beside it.
type Outlook struct {
	Base Forecast
	// WithoutWindow is, with a send window, the forecast without it: how
	// much the window stretches the campaign.
	WithoutWindow *Forecast
	// OneMore is the forecast with one more account of each tier, in the
	// order of the tiers given.
	OneMore []TierForecast
}

// TierForecast is the forecast with one more account of Tier.
type TierForecast struct {
	Tier string
	Forecast
}

// WhatIf forecasts in and its what-ifs. With a window w, the messages are
// sent only while it is open for their recipients, zones counting them by
// their time zones (comma-separated IANA names, as the recipient check
// gives them); in.Messages is then their sum.
func WhatIf(in Input, w *campaign.Window, zones map[string]int, tiers []campaign.Tier) (Outlook, error) {
	var out Outlook
	if w != nil {
		plain, err := Plan(in)
		if err != nil {
			return out, fmt.Errorf("forecast without the send window: %w", err)
		}
		out.WithoutWindow = &plain
		in.Window = w
		groups, err := Groups(zones)
		if err != nil {
			return out, err
		}
		in.Groups = groups
	}
	base, err := Plan(in)
	if err != nil {
		return out, fmt.Errorf("forecast: %w", err)
	}
	out.Base = base
	for _, t := range tiers {
		more, err := Plan(WithExtra(in, t.Name, t.Limits))
		if err != nil {
			return out, fmt.Errorf("forecast with one more %s account: %w", t.Name, err)
		}
		out.OneMore = append(out.OneMore, TierForecast{Tier: t.Name, Forecast: more})
	}
	return out, nil
}

func zoneKey(g Group) string {
	names := make([]string, len(g.Zones))
	for i, z := range g.Zones {
		names[i] = z.String()
	}
	return strings.Join(names, ",")
}
