package campaign

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Template is a message template as synced from a WhatsApp Business
// Account (`wasend template sync`).
type Template struct {
	WABA            string
	Name            string
	Language        string
	Status          string // APPROVED, PENDING, REJECTED, PAUSED, DISABLED
	Category        string
	ParameterFormat string // POSITIONAL or NAMED
	Components      string // JSON, as Meta sends it
	SyncedAt        time.Time
}

type templateComponent struct {
	Type    string `json:"type"`
	Format  string `json:"format"`
	Text    string `json:"text"`
	Buttons []struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"buttons"`
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// placeholders returns the distinct parameters of a text, in order.
func placeholders(text string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// CheckTemplate says why a campaign's spec does not fit the synced
// templates: the template does not exist in that language, is not
// APPROVED, or its body, header or button parameters are not what the
// spec sends. nil when it fits (or the spec is not a template).
func CheckTemplate(spec Spec, ts []Template) error {
	if spec.Kind != KindTemplate {
		return nil
	}
	var langs []string
	var t *Template
	for i := range ts {
		if ts[i].Name != spec.Template {
			continue
		}
		langs = append(langs, ts[i].Language)
		if ts[i].Language == spec.Lang {
			t = &ts[i]
		}
	}
	switch {
	case len(langs) == 0:
		return fmt.Errorf("template %q does not exist among the %d synced templates (`wasend template list`)", spec.Template, len(ts))
	case t == nil:
		sort.Strings(langs)
		return fmt.Errorf("template %q has no %q translation (it has %s)", spec.Template, spec.Lang, strings.Join(langs, ", "))
	case t.Status != "APPROVED":
		return fmt.Errorf("template %q (%s) is %s, not APPROVED: every message would fail", t.Name, t.Language, t.Status)
	}
	var comps []templateComponent
	if err := json.Unmarshal([]byte(t.Components), &comps); err != nil {
		return fmt.Errorf("template %q (%s): components as synced are unreadable: %w", t.Name, t.Language, err)
	}
	where := fmt.Sprintf("template %q (%s)", t.Name, t.Language)
	named := strings.EqualFold(t.ParameterFormat, "NAMED")
	var header *templateComponent
	var body []string
	var urlButtons []int
	for i := range comps {
		c := &comps[i]
		switch strings.ToUpper(c.Type) {
		case "HEADER":
			header = c
		case "BODY":
			body = placeholders(c.Text)
		case "BUTTONS":
			for k, b := range c.Buttons {
				if strings.EqualFold(b.Type, "URL") && len(placeholders(b.URL)) > 0 {
					urlButtons = append(urlButtons, k)
				}
			}
		}
	}
	if named != spec.NamedParams {
		if named {
			return fmt.Errorf("%s takes named parameters: add --named-params", where)
		}
		return fmt.Errorf("%s takes positional parameters ({{1}}…): drop --named-params", where)
	}
	if len(body) != len(spec.Params) {
		return fmt.Errorf("%s has %d body parameter(s) (%s); --params gives %d", where, len(body), strings.Join(body, ", "), len(spec.Params))
	}
	if named {
		for _, p := range spec.Params {
			if !slices.Contains(body, p) {
				return fmt.Errorf("%s has no body parameter {{%s}} (it has %s)", where, p, strings.Join(body, ", "))
			}
		}
	}
	want := HeaderType("")
	if header != nil {
		switch f := strings.ToUpper(header.Format); {
		case f == "TEXT" && len(placeholders(header.Text)) > 0:
			want = HeaderText
		case f == "IMAGE" || f == "DOCUMENT" || f == "VIDEO":
			want = HeaderType(strings.ToLower(f))
		}
	}
	got := HeaderType("")
	if spec.Header != nil {
		got = spec.Header.Type
	}
	if got != want {
		if want == "" {
			return fmt.Errorf("%s has no header parameter; the flags send a %s header", where, got)
		}
		return fmt.Errorf("%s needs a %s header (--header-%s COLUMN); the flags send %s", where, want, want, orNone(string(got)))
	}
	var sent []int
	for _, b := range spec.Buttons {
		sent = append(sent, b.Index)
	}
	slices.Sort(sent)
	if !slices.Equal(sent, urlButtons) {
		return fmt.Errorf("%s has URL button parameters at %v; --button-param gives %v", where, urlButtons, sent)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return "a " + s + " header"
}

// TemplateCheck is the outcome of checking a campaign against the
// templates of the WABAs of the accounts that will send it.
type TemplateCheck struct {
	// Unchecked says, per account or group of accounts, why the template
	// could not be checked for them (no templates synced for their WABA).
	Unchecked []string
}

// CheckTemplateForAccounts checks spec against the synced templates of the
// WABAs of accts, the accounts that will send it. Templates are stored per
// WABA: an account with a WABA id (account add|set --waba-id) is checked
// against that WABA's templates only, and a template its WABA lacks, or
// has unapproved or with other parameters, refuses the campaign naming the
// account — every message it sent would fail. An account whose WABA has no
// synced templates is not checked (said in Unchecked). Accounts without a
// WABA id are checked as before WABAs were known: the template must fit
// in one of the synced WABAs. With no templates synced at all nothing is
// checked and Unchecked says so.
func CheckTemplateForAccounts(spec Spec, accts []Account, ts []Template) (TemplateCheck, error) {
	var out TemplateCheck
	if spec.Kind != KindTemplate {
		return out, nil
	}
	what := fmt.Sprintf("template %q (%s)", spec.Template, spec.Lang)
	if len(ts) == 0 {
		out.Unchecked = append(out.Unchecked, what+" could not be checked: no templates synced (`wasend template sync`)")
		return out, nil
	}
	byWABA := map[string][]Template{}
	var wabas []string
	for _, t := range ts {
		if _, ok := byWABA[t.WABA]; !ok {
			wabas = append(wabas, t.WABA)
		}
		byWABA[t.WABA] = append(byWABA[t.WABA], t)
	}
	sort.Strings(wabas)
	senders := map[string][]string{} // WABA → account names
	var order []string
	for _, a := range accts {
		if _, ok := senders[a.WABA]; !ok {
			order = append(order, a.WABA)
		}
		senders[a.WABA] = append(senders[a.WABA], a.Name)
	}
	if len(accts) == 0 {
		order = []string{""} // no account known: the check of old
	}
	sort.Strings(order)
	for _, waba := range order {
		names := strings.Join(senders[waba], ", ")
		if waba == "" {
			var first error
			for _, w := range wabas {
				err := CheckTemplate(spec, byWABA[w])
				if err == nil {
					first = nil
					break
				}
				if first == nil {
					first = err
				}
			}
			if first != nil {
				return out, first
			}
			continue
		}
		own, ok := byWABA[waba]
		if !ok {
			out.Unchecked = append(out.Unchecked, fmt.Sprintf("%s could not be checked for account(s) %s: no templates synced from their WABA %s (`wasend template sync`)", what, names, waba))
			continue
		}
		if err := CheckTemplate(spec, own); err != nil {
			return out, fmt.Errorf("account(s) %s (WABA %s): %w; sync its templates again, or disable the account(s) for this run with wasend account set and --disable", names, waba, err)
		}
	}
	return out, nil
}
