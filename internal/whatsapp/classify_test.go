package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClassify(t *testing.T) {
	api := func(code int) error { return &APIError{HTTPStatus: 400, Code: code} }
	noBody := func(status int) error { return &APIError{HTTPStatus: status, NoBody: true} }

	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, ClassOK},

		{"130429", api(130429), ClassThrottled},
		{"80007", api(80007), ClassThrottled},
		{"4", api(4), ClassThrottled},

		{"131056", api(131056), ClassPairThrottled},

		{"131048", api(131048), ClassLongRestriction},
		{"131064", api(131064), ClassLongRestriction},

		{"1", api(1), ClassTransient},
		{"2", api(2), ClassTransient},
		{"131000", api(131000), ClassTransient},
		{"131016", api(131016), ClassTransient},
		{"133004", api(133004), ClassTransient},
		{"131057", api(131057), ClassNumberUpgrading},
		{"131057 on marketing_messages", &APIError{HTTPStatus: 400, Code: 131057, Marketing: true}, ClassNumberUpgrading},
		{"131009 on marketing_messages", &APIError{HTTPStatus: 400, Code: 131009, Marketing: true}, ClassTemplateSyncing},
		{"131055 on marketing_messages", &APIError{HTTPStatus: 400, Code: 131055, Marketing: true}, ClassCampaignFatal},
		{"131055 on messages", &APIError{HTTPStatus: 400, Code: 131055}, ClassPermanent},
		{"132001 on marketing_messages", &APIError{HTTPStatus: 404, Code: 132001, Marketing: true}, ClassCampaignFatal},

		{"131026", api(131026), ClassPermanent},
		{"131047", api(131047), ClassPermanent},
		{"131049", api(131049), ClassPermanent},
		{"131050", api(131050), ClassPermanent},
		{"131051", api(131051), ClassPermanent},
		{"131052", api(131052), ClassPermanent},
		{"131053", api(131053), ClassPermanent},
		{"131021", api(131021), ClassPermanent},
		{"130403", api(130403), ClassPermanent},
		{"130472", api(130472), ClassPermanent},
		{"130497", api(130497), ClassPermanent},
		{"100", api(100), ClassPermanent},
		{"131008", api(131008), ClassPermanent},
		{"131009", api(131009), ClassPermanent},
		{"131030", api(131030), ClassPermanent},
		{"unlisted 999999", api(999999), ClassPermanent},
		{"unlisted 133016", api(133016), ClassPermanent},
		{"unlisted negative", api(-1), ClassPermanent},

		{"132000", api(132000), ClassCampaignFatal},
		{"132001", api(132001), ClassCampaignFatal},
		{"132005", api(132005), ClassCampaignFatal},
		{"132012", api(132012), ClassCampaignFatal},
		{"132007", api(132007), ClassCampaignFatal},
		{"132015", api(132015), ClassCampaignFatal},
		{"132016", api(132016), ClassCampaignFatal},
		{"131063", api(131063), ClassCampaignFatal},

		{"190", api(190), ClassAccountFatal},
		{"0 in a Graph body", api(0), ClassAccountFatal},
		{"3", api(3), ClassAccountFatal},
		{"10", api(10), ClassAccountFatal},
		{"200", api(200), ClassAccountFatal},
		{"250", api(250), ClassAccountFatal},
		{"299", api(299), ClassAccountFatal},
		{"300 is not a permission code", api(300), ClassPermanent},
		{"199 is not a permission code", api(199), ClassPermanent},
		{"131005", api(131005), ClassAccountFatal},
		{"368", api(368), ClassAccountFatal},
		{"131031", api(131031), ClassAccountFatal},
		{"131042", api(131042), ClassAccountFatal},
		{"131045", api(131045), ClassAccountFatal},
		{"133010", api(133010), ClassAccountFatal},
		{"33", api(33), ClassAccountFatal},
		{"131037", api(131037), ClassAccountFatal},

		// error_subcode refines a code only where Meta's table says so.
		{"100 with subcode 33: an unknown phone number id", &APIError{HTTPStatus: 400, Code: 100, Subcode: 33}, ClassAccountFatal},
		{"100 with another subcode", &APIError{HTTPStatus: 400, Code: 100, Subcode: 2018001}, ClassPermanent},
		{"subcode 33 under another code", &APIError{HTTPStatus: 400, Code: 131026, Subcode: 33}, ClassPermanent},
		{"190 with subcode 463", &APIError{HTTPStatus: 401, Code: 190, Subcode: 463}, ClassAccountFatal},

		// The code wins over the HTTP status when there is a Graph body.
		{"429 with body 131056", &APIError{HTTPStatus: 429, Code: 131056}, ClassPairThrottled},
		{"500 with body 100", &APIError{HTTPStatus: 500, Code: 100}, ClassPermanent},

		{"no body 429", noBody(429), ClassThrottled},
		{"no body 500", noBody(500), ClassTransient},
		{"no body 503", noBody(503), ClassTransient},
		{"no body 502", noBody(502), ClassAmbiguous},
		{"no body 504", noBody(504), ClassAmbiguous},
		{"no body 400", noBody(400), ClassPermanent},
		{"no body 401", noBody(401), ClassPermanent},
		// Nothing answers for this number at this URL (a proxy's HTML 404):
		// the account's configuration, not this row nor an outage.
		{"no body 404", noBody(404), ClassAccountFatal},
		{"no body 302", noBody(302), ClassPermanent},

		{"transport not written", &TransportError{Err: errors.New("connection refused")}, ClassTransient},
		{"transport written", &TransportError{Written: true, Err: context.DeadlineExceeded}, ClassAmbiguous},

		{"wrapped api error", fmt.Errorf("row 7: %w", api(131056)), ClassPairThrottled},
		{"wrapped transport error", fmt.Errorf("row 7: %w", &TransportError{Written: true, Err: errors.New("EOF")}), ClassAmbiguous},
		{"invalid request", fmt.Errorf("%w: bad number", ErrInvalidRequest), ClassPermanent},
		{"no credentials", fmt.Errorf("%w: no token", ErrNoCredentials), ClassAccountFatal},
		{"unknown error", errors.New("boom"), ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestRemedyForEveryCampaignFatalCode: a campaign-fatal answer pauses the
// campaign, and the pause must say what to fix before resuming it (on
// /messages or on /marketing_messages).
func TestRemedyForEveryCampaignFatalCode(t *testing.T) {
	for code := 0; code < 140000; code++ {
		fatal := ClassifyCode(code) == ClassCampaignFatal || marketingCodes[code] == ClassCampaignFatal
		remedy := Remedy(code) != ""
		if fatal != remedy {
			t.Errorf("code %d: campaign-fatal %v, remedy %q", code, fatal, Remedy(code))
		}
	}
}

func TestClassString(t *testing.T) {
	tests := []struct {
		c    Class
		want string
	}{
		{ClassOK, "ok"},
		{ClassThrottled, "throttled"},
		{ClassPairThrottled, "pair-throttled"},
		{ClassLongRestriction, "long-restriction"},
		{ClassTransient, "transient"},
		{ClassPermanent, "permanent"},
		{ClassCampaignFatal, "campaign-fatal"},
		{ClassAccountFatal, "account-fatal"},
		{ClassAmbiguous, "ambiguous"},
		{ClassTemplateSyncing, "template-syncing"},
		{ClassNumberUpgrading, "number-upgrading"},
		{Class(42), "Class(42)"},
		{Class(-1), "Class(-1)"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Class(%d).String() = %q, want %q", int(tt.c), got, tt.want)
		}
	}
}
