package campaign

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string // in the error; nil: valid
	}{
		{"spring sale, second wave", nil},
		{"Frühling 🌷 — zweite Welle", nil},
		{"a\tb", []string{"a tab", "character 2"}},
		{"spring\nsale", []string{"a line break", "character 7"}},
		{"x\r", []string{"a carriage return", "character 2"}},
		{"bell\a", []string{"a control character U+0007", "character 5"}},
		{"esc\x1b[31mred", []string{"U+001B", "character 4"}},
		{"para\u2029graph", []string{"a line break", "character 5"}},
		{"c1\u0085", []string{"a line break", "character 3"}},
		{"   ", []string{"empty"}},
		{"", []string{"empty"}},
		{"bad\xffutf8", []string{"not valid UTF-8"}},
	} {
		err := ValidateName(tt.name)
		if tt.want == nil {
			if err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidateName(%q) = nil, want an error saying %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ValidateName(%q) = %q, want it to say %q", tt.name, err, w)
			}
		}
	}
}
