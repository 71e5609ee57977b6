package campaign

import (
	"strings"
	"testing"
)

func TestCheckTemplate(t *testing.T) {
	ts := []Template{
		{Name: "spring_sale", Language: "en_US", Status: "APPROVED", ParameterFormat: "POSITIONAL",
			Components: `[{"type":"BODY","text":"Hi {{1}}, code {{2}}, again {{1}}"}]`},
		{Name: "spring_sale", Language: "de", Status: "PAUSED", Components: `[{"type":"BODY","text":"Hallo {{1}} {{2}}"}]`},
		{Name: "order_ready", Language: "de", Status: "APPROVED", ParameterFormat: "NAMED",
			Components: `[{"type":"HEADER","format":"IMAGE"},{"type":"BODY","text":"Hallo {{name}}, {{order}}"},
			{"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"ok"},{"type":"URL","url":"https://x.example/{{1}}"}]}]`},
		{Name: "promo", Language: "en_US", Status: "APPROVED", Components: `[{"type":"HEADER","format":"TEXT","text":"Hi {{1}}"},{"type":"BODY","text":"no params"}]`},
	}
	spring := Spec{Kind: KindTemplate, Template: "spring_sale", Lang: "en_US", Params: []string{"name", "code"}}
	order := Spec{Kind: KindTemplate, Template: "order_ready", Lang: "de", Params: []string{"order", "name"}, NamedParams: true,
		Header: &Header{Type: HeaderImage, Column: "img"}, Buttons: []Button{{Index: 1, Column: "id"}}}
	with := func(s Spec, f func(*Spec)) Spec { f(&s); return s }
	tests := []struct {
		name string
		spec Spec
		want string // "" fits
	}{
		{"fits", spring, ""},
		{"named, header, button fit", order, ""},
		{"text messages are not templates", Spec{Kind: KindText, Text: "hi"}, ""},
		{"unknown template", with(spring, func(s *Spec) { s.Template = "nope" }), `"nope" does not exist`},
		{"no such language", with(spring, func(s *Spec) { s.Lang = "fr" }), `no "fr" translation (it has de, en_US)`},
		{"not approved", with(spring, func(s *Spec) { s.Lang = "de" }), "is PAUSED, not APPROVED"},
		{"one parameter too few", with(spring, func(s *Spec) { s.Params = []string{"name"} }), "has 2 body parameter(s) (1, 2); --params gives 1"},
		{"named params on a positional template", with(spring, func(s *Spec) { s.NamedParams = true }), "drop --named-params"},
		{"positional params on a named template", with(order, func(s *Spec) { s.NamedParams = false }), "add --named-params"},
		{"a named parameter the template lacks", with(order, func(s *Spec) { s.Params = []string{"name", "code"} }), "no body parameter {{code}}"},
		{"wrong media header", with(order, func(s *Spec) { s.Header = &Header{Type: HeaderVideo, Column: "v"} }), "needs a image header"},
		{"missing header", with(order, func(s *Spec) { s.Header = nil }), "needs a image header"},
		{"header the template lacks", with(spring, func(s *Spec) { s.Header = &Header{Type: HeaderText, Column: "h"} }), "has no header parameter"},
		{"text header", Spec{Kind: KindTemplate, Template: "promo", Lang: "en_US", Header: &Header{Type: HeaderText, Column: "h"}}, ""},
		{"button index wrong", with(order, func(s *Spec) { s.Buttons = []Button{{Index: 0, Column: "id"}} }), "URL button parameters at [1]; --button-param gives [0]"},
		{"button missing", with(order, func(s *Spec) { s.Buttons = nil }), "URL button parameters at [1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTemplate(tt.spec, ts)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckTemplate = %v, want it to fit", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckTemplate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCheckTemplateForAccounts(t *testing.T) {
	body := `[{"type":"BODY","text":"Hi {{1}}"}]`
	ts := []Template{
		{WABA: "A", Name: "spring_sale", Language: "en_US", Status: "APPROVED", Components: body},
		{WABA: "B", Name: "spring_sale", Language: "en_US", Status: "PAUSED", Components: body},
		{WABA: "C", Name: "other", Language: "en_US", Status: "APPROVED", Components: body},
	}
	spec := Spec{Kind: KindTemplate, Template: "spring_sale", Lang: "en_US", Params: []string{"name"}}
	tests := []struct {
		name      string
		accts     []Account
		ts        []Template
		want      string // error; "" none
		unchecked string // in Unchecked; "" none
	}{
		{"own WABA fits", []Account{{Name: "a1", WABA: "A"}, {Name: "a2", WABA: "A"}}, ts, "", ""},
		{"one sender's WABA paused it", []Account{{Name: "a1", WABA: "A"}, {Name: "b1", WABA: "B"}}, ts,
			`account(s) b1 (WABA B): template "spring_sale" (en_US) is PAUSED`, ""},
		{"a WABA without it", []Account{{Name: "c1", WABA: "C"}}, ts, `account(s) c1 (WABA C): template "spring_sale" does not exist`, ""},
		{"a WABA not synced", []Account{{Name: "a1", WABA: "A"}, {Name: "d1", WABA: "D"}}, ts, "", "could not be checked for account(s) d1: no templates synced from their WABA D"},
		{"no WABA: fits in one synced WABA", []Account{{Name: "x"}}, ts, "", ""},
		{"no WABA: fits in none", []Account{{Name: "x"}}, ts[1:], "is PAUSED", ""},
		{"no accounts: the check of old", nil, ts, "", ""},
		{"nothing synced", []Account{{Name: "a1", WABA: "A"}}, nil, "", `template "spring_sale" (en_US) could not be checked: no templates synced`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := CheckTemplateForAccounts(spec, tt.accts, tt.ts)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			got := strings.Join(res.Unchecked, "\n")
			if tt.unchecked == "" && got != "" || !strings.Contains(got, tt.unchecked) {
				t.Errorf("unchecked %q, want %q", got, tt.unchecked)
			}
		})
	}
}
