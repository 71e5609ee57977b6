package webhook

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
)

// Meta's own example payloads (testdata/) read as wasend needs them.
func TestDecodeMetaExamples(t *testing.T) {
	tests := []struct {
		file string
		want campaign.StatusEvent
		tmpl *campaign.TemplateEvent
		acct *campaign.AccountEvent
	}{
		{file: "status_sent_text.json", want: campaign.StatusEvent{
			WAMID: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDNzk5MjU4RkJGRjQ5NDk4QzgA", Status: campaign.DeliverySent,
			At: time.Unix(1750263773, 0), Recipient: "16505551234", PhoneNumberID: "106540352242922", Pricing: "service",
			PricingType: "free_customer_service", PricingModel: "PMP", NotBillable: true}},
		{file: "status_delivered_template.json", want: campaign.StatusEvent{
			WAMID: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI3NTZGRjJBODMxMDA3QzMwMzEA", Status: campaign.DeliveryDelivered,
			At: time.Unix(1750263780, 0), Recipient: "16505551234", CallbackData: "camp42:row1337",
			PhoneNumberID: "106540352242922", Pricing: "marketing", PricingType: "regular", PricingModel: "PMP"}},
		{file: "status_failed.json", want: campaign.StatusEvent{
			WAMID: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDNUIwQTU1QkE3Q0Q3MDgxRkEA", Status: campaign.DeliveryFailed,
			At: time.Unix(1750030073, 0), Recipient: "16505551234", CallbackData: "camp42:row1337",
			PhoneNumberID: "106540352242922", ErrorCode: 131049,
			ErrorTitle: "This message was not delivered to maintain healthy ecosystem engagement.: In order to maintain a healthy ecosystem engagement, the message failed to be delivered."}},
		{file: "template_status_update.json", tmpl: &campaign.TemplateEvent{Template: "spring_sale", Lang: "en_US", Event: "PAUSED", Reason: "NONE"}},
		{file: "phone_number_quality_update.json", acct: &campaign.AccountEvent{DisplayNumber: "15550783881",
			Field: "phone_number_quality_update", Event: "FLAGGED", Reason: "messaging limit TIER_1K"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Decode(body)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.tmpl != nil:
				if len(n.Templates) != 1 || n.Templates[0] != *tt.tmpl || !n.Templates[0].Stops() {
					t.Errorf("templates = %+v, want %+v", n.Templates, *tt.tmpl)
				}
			case tt.acct != nil:
				if len(n.Accounts) != 1 || n.Accounts[0] != *tt.acct {
					t.Errorf("accounts = %+v, want %+v", n.Accounts, *tt.acct)
				}
			default:
				if len(n.Statuses) != 1 || n.Statuses[0] != tt.want {
					t.Errorf("statuses = %+v\nwant %+v", n.Statuses, tt.want)
				}
				if n.Numbers["15550783881"] != "106540352242922" {
					t.Errorf("numbers = %v", n.Numbers)
				}
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, body := range []string{
		`[]`,
		`{"object":"page","entry":[]}`,
		`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"statuses":[{"id":"w","status":"sent","timestamp":"yesterday"}]}}]}]}`,
		`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"statuses":"no"}}]}]}`,
	} {
		if _, err := Decode([]byte(body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%s) = %v, want ErrMalformed", body, err)
		}
	}
}
