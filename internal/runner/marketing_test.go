package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// TestEndpointFromSync: template sync reads each WABA's Marketing Messages
// API onboarding from the sandbox; under --api auto a marketing template
// goes through it from the onboarded WABA's numbers only, --api marketing
// refuses a utility template before sending, and --api cloud never uses it.
func TestEndpointFromSync(t *testing.T) {
	ctx := context.Background()
	st, syncLog := syncedStore(t)
	checkSyncOutput(t, syncLog)
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

func checkSyncOutput(t *testing.T, errOut string) {
	t.Helper()
	for _, want := range []string{"WABA 100: Marketing Messages API ONBOARDED", "WABA 200: Marketing Messages API NOT_STARTED"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
}

// The sandbox's templates: a marketing one and a utility one.
var (
	sale  = campaign.Spec{Kind: campaign.KindTemplate, Template: "spring_sale", Lang: "en_US"}
	order = campaign.Spec{Kind: campaign.KindTemplate, Template: "order_ready", Lang: "de"}
)

// syncedStore is a store with two accounts on WABA 100 (onboarded to the
// Marketing Messages API) and 200 (not), their templates synced from the
// sandbox, and what the sync said on stderr.
func syncedStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(sandbox.New(sandbox.Options{Faults: sandbox.Faults{Marketing: map[string]string{"200": "NOT_STARTED"}}}))
	t.Cleanup(ts.Close)
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
	return st, errOut.String()
}

// TestEndpointPerAccount: without --api each account sends as its own
// (account set --api): marketing always through the Marketing Messages
// API, auto when its WABA is onboarded, cloud (or none) never; an account
// set to marketing refuses a utility template before sending, naming it.
func TestEndpointPerAccount(t *testing.T) {
	ctx := context.Background()
	st, _ := syncedStore(t)
	set := func(name string, api campaign.API) {
		t.Helper()
		if _, err := st.UpdateAccount(ctx, name, campaign.AccountChange{API: &api}); err != nil {
			t.Fatal(err)
		}
	}
	uses := func(ep dispatch.Endpoint, a campaign.Account) bool {
		return campaign.UseMarketing(ep.API, ep.Category, ep.Onboarded != nil && ep.Onboarded(a))
	}
	tests := []struct {
		on, off       campaign.API // the accounts' own --api
		spec          campaign.Spec
		wantErr       string
		useOn, useOff bool
	}{
		{"", "", sale, "", false, false},
		{campaign.APIAuto, campaign.APIAuto, sale, "", true, false},
		{campaign.APIAuto, campaign.APIMarketing, sale, "", true, true},
		{campaign.APICloud, campaign.APIMarketing, sale, "", false, true},
		{campaign.APIAuto, campaign.APIAuto, order, "", false, false},
		{"", campaign.APIMarketing, order, "account off (account set --api marketing)", false, false},
	}
	for _, tt := range tests {
		set("on", tt.on)
		set("off", tt.off)
		accts, err := st.Accounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]campaign.Account{}
		for _, a := range accts {
			byName[a.Name] = a.Account
		}
		if byName["on"].API != tt.on || byName["off"].API != tt.off {
			t.Fatalf("stored --api %q, %q; want %q, %q", byName["on"].API, byName["off"].API, tt.on, tt.off)
		}
		name := fmt.Sprintf("on %q, off %q, %s", tt.on, tt.off, tt.spec.Template)
		ep, err := runner.Endpoint(ctx, st, "", tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v; want %q", name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, gotOff := uses(ep, byName["on"]), uses(ep, byName["off"]); got != tt.useOn || gotOff != tt.useOff {
			t.Errorf("%s: marketing_messages from on %v, off %v; want %v, %v", name, got, gotOff, tt.useOn, tt.useOff)
		}
		// --api given wins over the accounts' own.
		if ep, err := runner.Endpoint(ctx, st, campaign.APICloud, tt.spec); err != nil || uses(ep, byName["off"]) {
			t.Errorf("%s: --api cloud sends through marketing_messages (err %v)", name, err)
		}
	}
}

// TestCheckTTL: --ttl is refused outside Meta's range for the template's
// category, for a marketing template whose sends go through /messages
// (Meta honours its TTL only through the Marketing Messages API), for a
// text message and for a template of unknown category.
func TestCheckTTL(t *testing.T) {
	ctx := context.Background()
	st, _ := syncedStore(t)
	unknown := campaign.Spec{Kind: campaign.KindTemplate, Template: "never_synced", Lang: "en_US"}
	text := campaign.Spec{Kind: campaign.KindText, Text: "hi"}
	tests := []struct {
		api     campaign.API
		spec    campaign.Spec
		ttl     time.Duration
		wantErr string // "" for none
	}{
		{campaign.APIAuto, sale, 0, ""},
		{campaign.APICloud, sale, 0, ""},
		{campaign.APIAuto, sale, 12 * time.Hour, ""},
		{campaign.APIMarketing, sale, 720 * time.Hour, ""},
		{campaign.APIAuto, sale, 11 * time.Hour, "a marketing template's time-to-live is 12h0m0s to 720h0m0s"},
		{campaign.APIAuto, sale, 721 * time.Hour, "a marketing template's time-to-live is 12h0m0s to 720h0m0s"},
		{campaign.APICloud, sale, 24 * time.Hour, "only through the Marketing Messages API"},
		{"", sale, 24 * time.Hour, "only through the Marketing Messages API"},
		{campaign.APICloud, order, time.Hour, ""},
		{campaign.APICloud, order, 13 * time.Hour, "a utility template's time-to-live is 30s to 12h0m0s"},
		{campaign.APICloud, order, 10 * time.Second, "a utility template's time-to-live is 30s to 12h0m0s"},
		{campaign.APICloud, order, -time.Hour, "must be positive"},
		{campaign.APICloud, unknown, time.Hour, "no known category"},
		{campaign.APICloud, text, time.Hour, "a --text message has none"},
	}
	for _, tt := range tests {
		err := runner.CheckTTL(ctx, st, tt.api, tt.spec, tt.ttl)
		name := fmt.Sprintf("--api %q %s --ttl %v", tt.api, tt.spec.Template, tt.ttl)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err %v; want %q", name, err, tt.wantErr)
		}
	}
}
