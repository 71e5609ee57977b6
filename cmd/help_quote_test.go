package cmd

import (
	"errors"
	"strings"
	"testing"
)

// TestUnquotedFlagValueHint: a flag value with a space given unquoted
// leaves a word over; the usage error shows the value quoted.
func TestUnquotedFlagValueHint(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"list flag", []string{"campaign", "check", "x.csv", "--params", "First", "Name"},
			`accepts 1 arg(s), received 2: if "Name" is part of --params's value, quote the whole value: --params 'First Name'`},
		{"list flag among others", []string{"campaign", "run", "x.csv", "--template", "t", "--lang", "en", "--params", "code,First", "Name"},
			`--params 'First Name'`},
		{"the one value flag", []string{"campaign", "check", "x.csv", "--phone-column", "Mobile", "Phone"},
			`quote the whole value: --phone-column 'Mobile Phone'`},
		{"no value flag", []string{"campaign", "check", "x.csv", "y.csv"},
			`if "y.csv" is part of a flag's value, quote the whole value`},
		{"a quote in the value", []string{"campaign", "check", "x.csv", "--phone-column", `Tom's`, "Phone"},
			`--phone-column 'Tom'\''s Phone'`},
	}
	for _, tt := range tests {
		c := newCLI(t)
		_, _, err := c.run(tt.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a usage error with %q", tt.name, err, tt.want)
		}
	}
}
