package campaign

import (
	"fmt"
	"strings"
	"time"
)

// API is which send endpoint a campaign's templates go through
// (--api, docs/sending.md#the-marketing-messages-api).
type API string

const (
	// APICloud sends everything through /messages, as before the
	// Marketing Messages API.
	APICloud API = "cloud"
	// APIMarketing sends through /marketing_messages and refuses a
	// template that is not a marketing one before anything is sent.
	APIMarketing API = "marketing"
	// APIAuto sends marketing templates through /marketing_messages when
	// the number's WABA is onboarded, everything else through /messages.
	APIAuto API = "auto"
)

// ParseAPI reads an --api value; "" is APICloud.
func ParseAPI(s string) (API, error) {
	switch a := API(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return APICloud, nil
	case APICloud, APIMarketing, APIAuto:
		return a, nil
	}
	return "", fmt.Errorf("--api %q: want cloud, marketing or auto", s)
}

// CategoryMarketing is the category Meta gives marketing templates.
const CategoryMarketing = "MARKETING"

// CheckAPI refuses, before sending, a template --api marketing cannot
// send: the Marketing Messages API takes marketing templates only.
// category is the template's as template sync read it ("" when unknown).
func CheckAPI(api API, template, category string) error {
	if api != APIMarketing || strings.EqualFold(category, CategoryMarketing) {
		return nil
	}
	if category == "" {
		return fmt.Errorf("--api marketing: template %s has no known category (run wasend template sync); the Marketing Messages API sends marketing templates only", template)
	}
	return fmt.Errorf("--api marketing: template %s is a %s template; the Marketing Messages API sends marketing templates only (use --api auto or cloud)", template, strings.ToLower(category))
}

// UseMarketing says whether one send goes through /marketing_messages:
// under marketing always (CheckAPI refused the others), under auto for a
// marketing template from a number whose WABA is onboarded.
func UseMarketing(api API, category string, onboarded bool) bool {
	switch api {
	case APIMarketing:
		return true
	case APIAuto:
		return onboarded && strings.EqualFold(category, CategoryMarketing)
	}
	return false
}

// ttlRanges are the time-to-live ranges Meta accepts per template category
// (templates/time-to-live, read 2026-12-01); a marketing template's TTL is
// honoured only through the Marketing Messages API.
var ttlRanges = map[string][2]time.Duration{
	"AUTHENTICATION":  {30 * time.Second, 15 * time.Minute},
	"UTILITY":         {30 * time.Second, 12 * time.Hour},
	CategoryMarketing: {12 * time.Hour, 30 * 24 * time.Hour},
}

// CheckTTL refuses a --ttl outside Meta's range for the template's
// category, naming the range; 0 is no --ttl.
func CheckTTL(ttl time.Duration, category string) error {
	if ttl == 0 {
		return nil
	}
	r, ok := ttlRanges[strings.ToUpper(category)]
	if !ok {
		return fmt.Errorf("--ttl %v: the template's category %q has no time-to-live range (authentication, utility or marketing)", ttl, category)
	}
	if ttl < r[0] || ttl > r[1] {
		return fmt.Errorf("--ttl %v: a %s template's time-to-live is %v to %v", ttl, strings.ToLower(category), r[0], r[1])
	}
	return nil
}
