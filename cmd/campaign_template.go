package cmd

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
)

// templateOptions are the flags for template shapes beyond positional body
// parameters.
type templateOptions struct {
	NamedParams    bool
	HeaderText     string
	HeaderImage    string
	HeaderDocument string
	HeaderVideo    string
	ButtonParams   []string // INDEX=COLUMN
}

// addTemplateFlags adds the template shape flags, shared by run, check and
// preview.
func addTemplateFlags(fl *pflag.FlagSet, o *runOptions) {
	fl.BoolVar(&o.NamedParams, "named-params", false, "send the --params columns as named parameters {{column}} (templates with parameter_format NAMED)")
	fl.StringVar(&o.HeaderText, "header-param", "", "`COLUMN` that fills the template header's text parameter")
	fl.StringVar(&o.HeaderImage, "header-image", "", "`COLUMN` with the header image: an https:// link or a media id")
	fl.StringVar(&o.HeaderDocument, "header-document", "", "`COLUMN` with the header document (PDF): an https:// link or a media id")
	fl.StringVar(&o.HeaderVideo, "header-video", "", "`COLUMN` with the header video: an https:// link or a media id")
	fl.StringArrayVar(&o.ButtonParams, "button-param", nil, "`INDEX=COLUMN`: COLUMN fills the URL suffix of the template's URL button INDEX (0-based; repeatable)")
}

// set reports whether any template shape flag was given.
func (t templateOptions) set() bool {
	return t.NamedParams || t.HeaderText != "" || t.HeaderImage != "" || t.HeaderDocument != "" ||
		t.HeaderVideo != "" || len(t.ButtonParams) > 0
}

// apply checks the template shape flags and adds them to s.
func (t templateOptions) apply(s *campaign.Spec) error {
	if t.NamedParams {
		if len(s.Params) == 0 {
			return usagef("--named-params needs --params naming the columns (and parameters) to send")
		}
		s.NamedParams = true
	}
	var flags []string
	for _, h := range []struct {
		flag, column string
		typ          campaign.HeaderType
	}{
		{"--header-param", t.HeaderText, campaign.HeaderText},
		{"--header-image", t.HeaderImage, campaign.HeaderImage},
		{"--header-document", t.HeaderDocument, campaign.HeaderDocument},
		{"--header-video", t.HeaderVideo, campaign.HeaderVideo},
	} {
		if col := strings.TrimSpace(h.column); col != "" {
			flags = append(flags, h.flag)
			s.Header = &campaign.Header{Type: h.typ, Column: col}
		}
	}
	if len(flags) > 1 {
		return usagef("%s: a template has one header, give only one header flag", strings.Join(flags, " and "))
	}
	seen := map[int]bool{}
	for _, bp := range t.ButtonParams {
		idx, col, ok := strings.Cut(bp, "=")
		col = strings.TrimSpace(col)
		n, err := strconv.Atoi(strings.TrimSpace(idx))
		switch {
		case !ok || col == "" || err != nil:
			return usagef("--button-param %q: want INDEX=COLUMN, e.g. --button-param 0=order_path", bp)
		case n < 0 || n > 9:
			return usagef("--button-param %q: button index %d must be between 0 and 9", bp, n)
		case seen[n]:
			return usagef("--button-param %q: button %d is given twice", bp, n)
		}
		seen[n] = true
		s.Buttons = append(s.Buttons, campaign.Button{Index: n, Column: col})
	}
	return nil
}
