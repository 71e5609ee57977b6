package whatsapp

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// PricingPoint is one data point of GET /{waba-id}/pricing_analytics: what
// Meta billed for one country, category and type in one period. Cost is in
// the WABA's currency.
type PricingPoint struct {
	Start    int64   `json:"start"`
	End      int64   `json:"end"`
	Country  string  `json:"country"`          // ISO 3166 alpha-2
	Category string  `json:"pricing_category"` // MARKETING, UTILITY, …
	Type     string  `json:"pricing_type"`     // REGULAR, FREE_CUSTOMER_SERVICE, FREE_ENTRY_POINT
	Volume   int64   `json:"volume"`
	Cost     float64 `json:"cost"`
}

type pricingPage struct {
	Data []struct {
		DataPoints []PricingPoint `json:"data_points"`
	} `json:"data"`
	Paging struct {
		Next string `json:"next"`
	} `json:"paging"`
}

// PricingDimensions are the dimensions wasend asks pricing_analytics for.
const PricingDimensions = `["COUNTRY","PRICING_CATEGORY","PRICING_TYPE"]`

// PricingAnalytics reads what Meta billed a WABA from start to end, daily,
// by country, category and type. Errors are those of PhoneNumber.
func (c *Client) PricingAnalytics(ctx context.Context, wabaID, token string, start, end time.Time) ([]PricingPoint, error) {
	if wabaID == "" || token == "" {
		return nil, fmt.Errorf("%w: WABA id and token are required", ErrNoCredentials)
	}
	q := url.Values{
		"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)},
		"granularity": {"DAILY"}, "dimensions": {PricingDimensions},
	}
	endpoint := c.baseURL + "/" + c.version + "/" + url.PathEscape(wabaID) + "/pricing_analytics?" + q.Encode()
	var out []PricingPoint
	for page := 0; page < 100 && endpoint != ""; page++ {
		var p pricingPage
		if err := c.getJSON(ctx, endpoint, token, &p); err != nil {
			return nil, err
		}
		for _, d := range p.Data {
			out = append(out, d.DataPoints...)
		}
		endpoint = p.Paging.Next
	}
	return out, nil
}
