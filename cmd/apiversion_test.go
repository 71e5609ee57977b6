package cmd

import (
	"strings"
	"testing"
)

// TestAPIVersionWarning: any command says once, on stderr, that the
// configured Graph API version ends within 90 days or has ended; stdout and
// a version with a far end (or wasend's own) stay quiet.
func TestAPIVersionWarning(t *testing.T) {
	tests := []struct {
		version string
		want    string // "" for no warning
	}{
		{"", ""},
		{"v25.0", ""},
		{"v21.0", "warning: Graph API v21.0 works until 2027-01-21 (52 days left): set WASEND_API_VERSION to v26.0, or unset it"},
		{"v20.0", "warning: Graph API v20.0 stopped working after 2026-09-24"},
	}
	for _, tt := range tests {
		c := newCLI(t)
		c.emptyDB()
		if tt.version != "" {
			c.env["WASEND_API_VERSION"] = tt.version
		}
		out, errOut, err := c.run("account", "list")
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.version, err, errOut)
		}
		if strings.Contains(out, "Graph API") {
			t.Errorf("%q: the warning reached stdout:\n%s", tt.version, out)
		}
		n := strings.Count(errOut, "Graph API ")
		switch {
		case tt.want == "" && n != 0:
			t.Errorf("%q: want no warning, got:\n%s", tt.version, errOut)
		case tt.want != "" && (n != 1 || !strings.Contains(errOut, tt.want)):
			t.Errorf("%q: want %q once on stderr, got:\n%s", tt.version, tt.want, errOut)
		}
	}
}
