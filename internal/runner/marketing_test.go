package runner_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/ui"
)

// TestEndpointFromSync: template sync reads each WABA's Marketing Messages
// API onboarding from the sandbox; under --api auto a marketing template
// goes through it from the onboarded WABA's numbers only, --api marketing
// refuses a utility template before sending, and --api cloud never uses it.
func TestEndpointFromSync(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := httptest.NewServer(sandbox.New(sandbox.Options{Faults: sandbox.Faults{Marketing: map[string]string{"200": "NOT_STARTED"}}}))
	defer ts.Close()
	for _, a := range []campaign.Account{
		{Name: "on", PhoneNumberID: "1001", Tier: campaign.TierActive, TokenEnv: "T", WABA: "100"},
		{Name: "off", PhoneNumberID: "2002", Tier: campaign.TierActive, TokenEnv: "T", WABA: "200"},
	} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	reads, err := runner.WABAReads(ctx, st, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	api := &runner.API{BaseURL: ts.URL, Token: func(string) (string, error) { return "tok", nil }}
	if err := runner.SyncTemplates(ctx, st, ui.Test(&bytes.Buffer{}, &errOut), api, reads, 5*time.Second, time.Now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WABA 100: Marketing Messages API ONBOARDED", "WABA 200: Marketing Messages API NOT_STARTED"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("no %q in:\n%s", want, errOut.String())
		}
	}
	sale := campaign.Spec{Kind: campaign.KindTemplate, Template: "spring_sale", Lang: "en_US"}
	order := campaign.Spec{Kind: campaign.KindTemplate, Template: "order_ready", Lang: "de"}
	on, off := campaign.Account{WABA: "100"}, campaign.Account{WABA: "200"}
	tests := []struct {
		api     campaign.API
		spec    campaign.Spec
		wantErr string
		on, off bool // whether a send from each goes to marketing_messages
	}{
		{campaign.APIAuto, sale, "", true, false},
		{campaign.APIAuto, order, "", false, false},
		{campaign.APICloud, sale, "", false, false},
		{campaign.APIMarketing, sale, "", true, true},
		{campaign.APIMarketing, order, "template order_ready is a utility template", false, false},
	}
	for _, tt := range tests {
		ep, err := runner.Endpoint(ctx, st, tt.api, tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s %s: err %v; want %q", tt.api, tt.spec.Template, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tt.api, tt.spec.Template, err)
		}
		got := func(a campaign.Account) bool {
			return campaign.UseMarketing(ep.API, ep.Category, ep.Onboarded != nil && ep.Onboarded(a))
		}
		if got(on) != tt.on || got(off) != tt.off {
			t.Errorf("%s %s: onboarded WABA %v, other %v; want %v, %v", tt.api, tt.spec.Template, got(on), got(off), tt.on, tt.off)
		}
	}
}
