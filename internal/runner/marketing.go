package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Endpoint is how a campaign's sends choose their endpoint under --api:
// the template's category as template sync read it (the first synced
// WABA that has the template in the spec's language), checked against the
// choice before anything is sent, and the WABAs onboarded to the Marketing
// Messages API. A text campaign, or --api cloud, goes to /messages.
//
// Without --api (api ""), each account sends as its own --api (account
// set --api; "" is cloud): an account set to marketing refuses a
// non-marketing template here as --api marketing would.
func Endpoint(ctx context.Context, st driver.Driver, api campaign.API, spec campaign.Spec) (dispatch.Endpoint, error) {
	if api == campaign.APICloud || spec.Kind != campaign.KindTemplate {
		return dispatch.Endpoint{API: campaign.APICloud}, nil
	}
	var own []campaign.AccountStatus // accounts with an --api of their own
	if api == "" {
		accts, err := st.Accounts(ctx)
		if err != nil {
			return dispatch.Endpoint{}, err
		}
		for _, a := range accts {
			if a.API != "" && a.API != campaign.APICloud && !a.Disabled {
				own = append(own, a)
			}
		}
		if len(own) == 0 {
			return dispatch.Endpoint{API: campaign.APICloud}, nil
		}
	}
	rm := readmodel.New(st)
	category, err := templateCategory(ctx, rm, spec)
	if err != nil {
		return dispatch.Endpoint{}, err
	}
	if err := campaign.CheckAPI(api, spec.Template, category); err != nil {
		return dispatch.Endpoint{}, err
	}
	for _, a := range own {
		if err := campaign.CheckAPI(a.API, spec.Template, category); err != nil {
			return dispatch.Endpoint{}, fmt.Errorf("account %s (account set --api %s): %w", a.Name, a.API, err)
		}
	}
	statuses, err := rm.MarketingStatuses(ctx)
	if err != nil {
		return dispatch.Endpoint{}, err
	}
	onboarded := func(a campaign.Account) bool { return statuses[a.WABA] == readmodel.MarketingOnboarded }
	if api != "" {
		return dispatch.Endpoint{API: api, Category: category, Onboarded: onboarded}, nil
	}
	// Each account its own: auto's rule (a marketing template, from a
	// number that may) with the account's choice of whether it may.
	return dispatch.Endpoint{API: campaign.APIAuto, Category: category, Onboarded: func(a campaign.Account) bool {
		switch a.API {
		case campaign.APIMarketing:
			return true
		case campaign.APIAuto:
			return onboarded(a)
		}
		return false
	}}, nil
}

// templateCategory is the spec's template's category as template sync read
// it (the first synced WABA that has it in the spec's language), "" when
// unknown.
func templateCategory(ctx context.Context, rm *readmodel.Reader, spec campaign.Spec) (string, error) {
	ts, err := rm.Templates(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		if t.Name == spec.Template && strings.EqualFold(t.Language, spec.Lang) {
			return t.Category, nil
		}
	}
	return "", nil
}

// CheckTTL refuses, before anything is stored, a --ttl Meta would not
// honour for the campaign's template: outside its category's range
// (campaign.CheckTTL), or a marketing template's when its sends go
// through /messages, where Meta keeps a marketing message 30 days
// whatever is asked (docs/cloud-api.md#marketing-messages-api).
func CheckTTL(ctx context.Context, st driver.Driver, api campaign.API, spec campaign.Spec, ttl time.Duration) error {
	if ttl == 0 {
		return nil
	}
	if ttl < 0 {
		return fmt.Errorf("--ttl %v: must be positive", ttl)
	}
	if spec.Kind != campaign.KindTemplate {
		return errors.New("--ttl: a time-to-live is a template's; a --text message has none")
	}
	category, err := templateCategory(ctx, readmodel.New(st), spec)
	if err != nil {
		return err
	}
	if category == "" {
		return fmt.Errorf("--ttl %v: template %s has no known category, and the range depends on it (run wasend template sync)", ttl, spec.Template)
	}
	if err := campaign.CheckTTL(ttl, category); err != nil {
		return err
	}
	if !strings.EqualFold(category, campaign.CategoryMarketing) {
		return nil
	}
	ep, err := Endpoint(ctx, st, api, spec)
	if err != nil {
		return err
	}
	if ep.API == campaign.APICloud {
		return fmt.Errorf("--ttl %v: Meta honours a marketing template's time-to-live only through the Marketing Messages API; these sends go through /messages (use --api marketing or auto)", ttl)
	}
	return nil
}
