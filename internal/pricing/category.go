package pricing

import "strings"

// Category is what Meta bills a template message as: the template's
// category, or authentication-international for an authentication message
// to a country with that rate (decided by Meta; webhooks say so).
type Category string

const (
	Marketing                   Category = "marketing"
	Utility                     Category = "utility"
	Authentication              Category = "authentication"
	AuthenticationInternational Category = "authentication_international"
	// Service is a free-form message in a customer service window; billed
	// only by cards that have a service column (announced for 2026-10-01).
	Service Category = "service"
	// MarketingLite is what webhooks call a marketing message sent through
	// the Marketing Messages API; it is priced as marketing.
	MarketingLite Category = "marketing_lite"
)

// Categories are the columns a card may have, in a card's order.
var Categories = []Category{Marketing, Utility, Authentication, AuthenticationInternational, Service}

// ParseCategory reads a category as templates, webhooks and card headers
// spell it ("MARKETING", "Authentication-International", "marketing_lite").
func ParseCategory(s string) (Category, bool) {
	k := key(s)
	if k == "marketinglite" {
		return Marketing, true
	}
	for _, c := range Categories {
		if key(string(c)) == k {
			return c, true
		}
	}
	return "", false
}

// key folds a name for matching: lower case, no spaces, dashes or
// underscores.
func key(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '\t':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// Free types: what a status webhook's pricing.type says when Meta does not
// charge the message.
const (
	TypeRegular             = "regular"
	TypeFreeCustomerService = "free_customer_service"
	TypeFreeEntryPoint      = "free_entry_point"
)

// Free says whether a webhook's pricing (type, billable) is not charged.
// billable is the older field (deprecated with per-message pricing): false
// means free wherever the type says nothing.
func Free(pricingType string, billable *bool) bool {
	switch pricingType {
	case TypeFreeCustomerService, TypeFreeEntryPoint:
		return true
	case TypeRegular:
		return false
	}
	return billable != nil && !*billable
}
