package runner

import (
	"context"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
)

// Endpoint is how a campaign's sends choose their endpoint under --api:
// the template's category as template sync read it (the first synced
// WABA that has the template in the spec's language), checked against the
// choice before anything is sent, and the WABAs onboarded to the Marketing
// Messages API. A text campaign, or --api cloud, goes to /messages.
func Endpoint(ctx context.Context, st *store.Store, api campaign.API, spec campaign.Spec) (dispatch.Endpoint, error) {
	if api == "" || api == campaign.APICloud || spec.Kind != campaign.KindTemplate {
		return dispatch.Endpoint{API: campaign.APICloud}, nil
	}
	ts, err := readmodel.New(st).Templates(ctx)
	if err != nil {
		return dispatch.Endpoint{}, err
	}
	category := ""
	for _, t := range ts {
		if t.Name == spec.Template && strings.EqualFold(t.Language, spec.Lang) {
			category = t.Category
			break
		}
	}
	if err := campaign.CheckAPI(api, spec.Template, category); err != nil {
		return dispatch.Endpoint{}, err
	}
	statuses, err := st.MarketingStatuses(ctx)
	if err != nil {
		return dispatch.Endpoint{}, err
	}
	return dispatch.Endpoint{API: api, Category: category, Onboarded: func(a campaign.Account) bool {
		return statuses[a.WABA] == store.MarketingOnboarded
	}}, nil
}
