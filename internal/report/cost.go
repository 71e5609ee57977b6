package report

// CampaignCost is a campaign's cost in status --json and show --json, in
// the rate card's currency, as exact decimal strings: the estimate (every
// row that may still cost), the actual cost (the delivered messages, as
// their status webhooks priced them) and the budget (--max-cost) with what
// counts against it. `wasend cost ID` has the lines by market × category.
type CampaignCost struct {
	Currency  string `json:"currency,omitempty"`
	Estimate  string `json:"estimate,omitempty"`
	Actual    string `json:"actual,omitempty"`
	Budget    string `json:"budget,omitempty"`
	Committed string `json:"accepted_or_in_flight,omitempty"` // what counts against the budget
	// NotPriced says why the campaign has no estimate (no card in force,
	// the template's category unknown).
	NotPriced string `json:"not_priced,omitempty"`
}
