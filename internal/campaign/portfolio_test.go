package campaign

import (
	"strings"
	"testing"
)

func TestPortfolioValidate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		p       Portfolio
		wantErr string // "" for valid
	}{
		{"plain", Portfolio{Name: "acme", Margin: 0.05}, ""},
		{"pinned, no margin", Portfolio{Name: "acme", PinnedLimit: 1000}, ""},
		{"blank name", Portfolio{Name: "  "}, "portfolio name: must not be empty"},
		{"negative limit", Portfolio{Name: "acme", PinnedLimit: -1}, "portfolio acme: limit -1: must be positive (or none)"},
		{"negative margin", Portfolio{Name: "acme", Margin: -0.1}, "portfolio acme: margin -10: must be at least 0 % and below 100 %"},
		{"whole limit kept back", Portfolio{Name: "acme", Margin: 1}, "margin 100: must be at least 0 % and below 100 %"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestEffectiveLimit(t *testing.T) {
	for _, tt := range []struct{ pinned, read, want int }{
		{0, 0, 0},
		{0, 250, 250},
		{100, 0, 100},
		{100, 250, 100},
		{1000, 250, 250},
		{Unlimited, 0, 0},
		{0, Unlimited, 0},
		{Unlimited, 250, 250}, // a pin of no limit does not lift a read one
		{100, Unlimited, 100},
	} {
		if got := EffectiveLimit(tt.pinned, tt.read); got != tt.want {
			t.Errorf("EffectiveLimit(%d, %d) = %d, want %d", tt.pinned, tt.read, got, tt.want)
		}
	}
}
