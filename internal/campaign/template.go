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
