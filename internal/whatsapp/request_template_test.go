package whatsapp

import (
	"errors"
	"strings"
	"testing"
)

// TestBuildBodyTemplateShapes pins the wire form of every template shape
// wasend sends against docs/cloud-api.md#template-message.
func TestBuildBodyTemplateShapes(t *testing.T) {
	const head = `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234","type":"template",` +
		`"template":{"name":"order_update","language":{"code":"en_US","policy":"deterministic"},"components":[`
	const tail = `]}}`
	tmpl := func(t Template) Request {
		t.Name, t.Lang = "order_update", "en_US"
		return Request{To: "+16505551234", Template: &t}
	}
	tests := []struct {
		name string
		req  Request
		want string // the components
	}{
		{
			name: "positional body",
			req:  tmpl(Template{BodyParams: []string{"Ana", "1234"}}),
			want: `{"type":"body","parameters":[{"type":"text","text":"Ana"},{"type":"text","text":"1234"}]}`,
		},
		{
			name: "named body",
			req:  tmpl(Template{BodyParams: []string{"Ana", "1234"}, BodyNames: []string{"customer_name", "order_id"}}),
			want: `{"type":"body","parameters":[{"type":"text","parameter_name":"customer_name","text":"Ana"},` +
				`{"type":"text","parameter_name":"order_id","text":"1234"}]}`,
		},
		{
			name: "header text",
			req:  tmpl(Template{Header: &Header{Type: "text", Value: "Spring sale"}}),
			want: `{"type":"header","parameters":[{"type":"text","text":"Spring sale"}]}`,
		},
		{
			name: "header image link",
			req:  tmpl(Template{Header: &Header{Type: "image", Value: "https://example.com/a.jpg"}}),
			want: `{"type":"header","parameters":[{"type":"image","image":{"link":"https://example.com/a.jpg"}}]}`,
		},
		{
			name: "header image plain http link",
			req:  tmpl(Template{Header: &Header{Type: "image", Value: "http://example.com/a.jpg"}}),
			want: `{"type":"header","parameters":[{"type":"image","image":{"link":"http://example.com/a.jpg"}}]}`,
		},
		{
			name: "header document id",
			req:  tmpl(Template{Header: &Header{Type: "document", Value: "1013859600285441"}}),
			want: `{"type":"header","parameters":[{"type":"document","document":{"id":"1013859600285441"}}]}`,
		},
		{
			name: "header video link",
			req:  tmpl(Template{Header: &Header{Type: "video", Value: "https://example.com/v.mp4"}}),
			want: `{"type":"header","parameters":[{"type":"video","video":{"link":"https://example.com/v.mp4"}}]}`,
		},
		{
			name: "url buttons",
			req:  tmpl(Template{Buttons: []URLButton{{Index: 0, Text: "order/1234"}, {Index: 2, Text: "track?id=9&x=<1>"}}}),
			want: `{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"order/1234"}]},` +
				`{"type":"button","sub_type":"url","index":"2","parameters":[{"type":"text","text":"track?id=9&x=<1>"}]}`,
		},
		{
			name: "all together",
			req: tmpl(Template{
				Header:     &Header{Type: "image", Value: "https://example.com/a.jpg"},
				BodyParams: []string{"Ana"}, BodyNames: []string{"customer_name"},
				Buttons: []URLButton{{Index: 0, Text: "order/1234"}},
			}),
			want: `{"type":"header","parameters":[{"type":"image","image":{"link":"https://example.com/a.jpg"}}]},` +
				`{"type":"body","parameters":[{"type":"text","parameter_name":"customer_name","text":"Ana"}]},` +
				`{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"order/1234"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildBody(tt.req)
			if err != nil {
				t.Fatalf("BuildBody: %v", err)
			}
			if want := head + tt.want + tail; string(got) != want {
				t.Errorf("BuildBody:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestBuildBodyTemplateShapeInvalid(t *testing.T) {
	tests := []struct {
		name    string
		tmpl    Template
		wantErr string
	}{
		{"empty header", Template{Header: &Header{Type: "image"}}, "empty image header"},
		{"unknown header type", Template{Header: &Header{Type: "audio", Value: "x"}}, `type "audio"`},
		{"names without values", Template{BodyNames: []string{"a"}}, "1 body parameter names for 0 values"},
		{"empty name", Template{BodyParams: []string{"x"}, BodyNames: []string{""}}, "empty name"},
		{"button index", Template{Buttons: []URLButton{{Index: 10, Text: "x"}}}, "button index 10"},
		{"empty button", Template{Buttons: []URLButton{{Index: 1}}}, "URL button 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.tmpl.Name, tt.tmpl.Lang = "t", "en"
			_, err := BuildBody(Request{To: "+16505551234", Template: &tt.tmpl})
			if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want ErrInvalidRequest mentioning %q", err, tt.wantErr)
			}
		})
	}
}
