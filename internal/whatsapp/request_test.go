package whatsapp

import (
	"errors"
	"strings"
	"testing"
)

func TestBuildBody(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{
			name: "template with body params",
			req: Request{To: "+16505551234", CallbackData: "wasend:c12:m345",
				Template: &Template{Name: "order_update", Lang: "en_US", BodyParams: []string{"Ana", "A&B <1>"}}},
			want: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"order_update","language":{"code":"en_US","policy":"deterministic"},` +
				`"components":[{"type":"body","parameters":[{"type":"text","text":"Ana"},{"type":"text","text":"A&B <1>"}]}]},` +
				`"biz_opaque_callback_data":"wasend:c12:m345"}`,
		},
		{
			name: "template without params has no components",
			req:  Request{To: "+16505551234", Template: &Template{Name: "hello_world", Lang: "en", BodyParams: []string{}}},
			want: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
				`"template":{"name":"hello_world","language":{"code":"en","policy":"deterministic"}}}`,
		},
		{
			name: "text",
			req:  Request{To: "+447700900123", Text: "Hello \"you\"\nbye"},
			want: `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+447700900123","type":"text",` +
				`"text":{"preview_url":false,"body":"Hello \"you\"\nbye"}}`,
		},
		{
			// Meta drops a BSUID sent in to (200, never delivered): it
			// goes in recipient, and the body has no to at all.
			name: "business-scoped user id in recipient, never to",
			req:  Request{To: "US.13491208655302741918", Template: &Template{Name: "hello_world", Lang: "en"}},
			want: `{"messaging_product":"whatsapp","recipient_type":"individual","recipient":"US.13491208655302741918","type":"template",` +
				`"template":{"name":"hello_world","language":{"code":"en","policy":"deterministic"}}}`,
		},
		{
			name: "parent business-scoped user id",
			req:  Request{To: "US.ENT.11815799212886844830", Text: "hi"},
			want: `{"messaging_product":"whatsapp","recipient_type":"individual","recipient":"US.ENT.11815799212886844830","type":"text",` +
				`"text":{"preview_url":false,"body":"hi"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildBody(tt.req)
			if err != nil {
				t.Fatalf("BuildBody: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("BuildBody:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestBuildBodyInvalid(t *testing.T) {
	tmpl := &Template{Name: "t", Lang: "en"}
	tests := []struct {
		name    string
		req     Request
		wantErr string
	}{
		{"empty to", Request{Template: tmpl}, "not E.164"},
		{"no plus", Request{To: "16505551234", Template: tmpl}, "leading '+'"},
		{"lower-case BSUID", Request{To: "us.13491208655302741918", Template: tmpl}, "two capital letters"},
		{"BSUID with a dash", Request{To: "US.1349-1208", Template: tmpl}, "not a letter or digit"},
		{"letters", Request{To: "+1650555abcd", Template: tmpl}, "digits only"},
		{"formatted", Request{To: "+1 650 555 1234", Template: tmpl}, "digits only"},
		{"too long", Request{To: "+1234567890123456", Template: tmpl}, "not a valid E.164"},
		{"leading zero", Request{To: "+0650555123", Template: tmpl}, "not a valid E.164"},
		{"template without lang", Request{To: "+16505551234", Template: &Template{Name: "t"}}, "name and a language"},
		{"template without name", Request{To: "+16505551234", Template: &Template{Lang: "en"}}, "name and a language"},
		{"nothing to send", Request{To: "+16505551234"}, "neither a template nor a text"},
		{"text too long", Request{To: "+16505551234", Text: strings.Repeat("é", 4097)}, "4097 characters"},
		{"callback too long", Request{To: "+16505551234", Text: "x", CallbackData: strings.Repeat("x", 513)}, "513 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildBody(tt.req)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want ErrInvalidRequest", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %q, want it to mention %q", err, tt.wantErr)
			}
			if c := Classify(err); c != ClassPermanent {
				t.Errorf("Classify = %v, want permanent", c)
			}
		})
	}
}

func TestRequestStringHidesToken(t *testing.T) {
	r := Request{PhoneNumberID: "123", Token: "SECRET-TOKEN", To: "+16505551234", Text: "hi"}
	if s := r.String(); strings.Contains(s, "SECRET") {
		t.Errorf("String() = %q leaks the token", s)
	}
}
