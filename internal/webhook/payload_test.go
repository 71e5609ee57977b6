package webhook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// The one-pass reading of status bodies (decodeStatusBody) reads what the
// general one does, and leaves every other body to it.
func TestDecodeStatusBodyAgrees(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	bodies := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(f)] = string(b)
	}
	const env = `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[%s]}]}`
	const st = `{"field":"messages","value":{"metadata":{"display_phone_number":"15550001111","phone_number_id":"42"},"statuses":[%s]}}`
	two := `{"id":"wamid.a","status":"delivered","timestamp":"1750263780","recipient_id":"16505551234","pricing":{"billable":false,"category":"marketing"}},` +
		`{"id":"wamid.b","status":"failed","timestamp":"1750263781","recipient_user_id":"US.1","errors":[{"code":131049,"message":"m","error_data":{"details":"d"}}]}`
	bodies["two statuses, two changes"] = fmt.Sprintf(env, fmt.Sprintf(st, two)+","+fmt.Sprintf(st, `{"id":"wamid.c","status":"read","timestamp":"1750263790"}`))
	bodies["a status and an inbound message"] = fmt.Sprintf(env, `{"field":"messages","value":{"metadata":{"phone_number_id":"42"},`+
		`"statuses":[{"id":"wamid.a","status":"sent","timestamp":"1750263780"}],"messages":[{"from":"16505551234","id":"wamid.in","timestamp":"1750263781","type":"text","text":{"body":"STOP"}}]}}`)
	bodies["a status and an event"] = fmt.Sprintf(env, fmt.Sprintf(st, two)+`,{"field":"message_template_status_update","value":{"event":"PAUSED","message_template_name":"x","message_template_language":"en"}}`)
	bodies["a field of another shape"] = fmt.Sprintf(env, `{"field":"security","value":{"statuses":"not a list"}},`+fmt.Sprintf(st, two))
	bodies["a bad timestamp"] = fmt.Sprintf(env, fmt.Sprintf(st, `{"id":"wamid.a","status":"sent","timestamp":"yesterday"}`))
	// Where JSON v2, which reads the one pass, and v1 differ.
	one := `{"id":"wamid.a","status":"delivered","timestamp":"1750263780"}`
	bodies["a name twice"] = fmt.Sprintf(env, fmt.Sprintf(st, `{"id":"wamid.a","status":"sent","status":"delivered","timestamp":"1750263780"}`))
	bodies["names in capitals"] = fmt.Sprintf(env, fmt.Sprintf(st, `{"ID":"wamid.a","Status":"delivered","timestamp":"1750263780","Pricing":{"Category":"marketing"}}`))
	bodies["invalid UTF-8"] = fmt.Sprintf(env, fmt.Sprintf(st, "{\"id\":\"wamid.\xff\",\"status\":\"read\",\"timestamp\":\"1750263780\"}"))
	bodies["messages null"] = fmt.Sprintf(env, `{"field":"messages","value":{"metadata":{"phone_number_id":"42"},"messages":null,"statuses":[`+one+`]}}`)
	bodies["pricing null"] = fmt.Sprintf(env, fmt.Sprintf(st, `{"id":"wamid.a","status":"delivered","timestamp":"1750263780","pricing":null}`))
	bodies["a number for a string"] = fmt.Sprintf(env, fmt.Sprintf(st, `{"id":"wamid.a","status":"delivered","timestamp":1750263780}`))
	fast := 0
	for name, body := range bodies {
		want, wantErr := decodeBody([]byte(body))
		got, err := Decode([]byte(body))
		if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: Decode = %+v, %v\nwant %+v, %v", name, got, err, want, wantErr)
		}
		if n, ok := decodeStatusBody([]byte(body)); ok {
			fast++
			if !reflect.DeepEqual(n, want) || wantErr != nil {
				t.Errorf("%s: decodeStatusBody = %+v\nwant %+v, %v", name, n, want, wantErr)
			}
			if len(n.Templates)+len(n.Accounts)+len(n.Inbound)+len(n.Upgrades) > 0 {
				t.Errorf("%s: read in one pass, but not statuses only: %+v", name, n)
			}
		}
	}
	if fast < 4 { // the three status examples and "two statuses, two changes", at least
		t.Errorf("%d bodies read in one pass, want 4 or more", fast)
	}
}
