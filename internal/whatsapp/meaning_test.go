package whatsapp

import (
	"strings"
	"testing"
)

// Every class the classifier returns has a meaning of its own: the HTML
// report's error table reads them beside each code.
func TestClassMeaning(t *testing.T) {
	seen := map[string]Class{}
	for c := ClassOK; c <= ClassAmbiguous; c++ {
		m := c.Meaning()
		if m == "" || m == c.String() || strings.HasPrefix(m, "Class(") {
			t.Errorf("%s has no meaning: %q", c, m)
		}
		if prev, ok := seen[m]; ok {
			t.Errorf("%s and %s mean the same: %q", prev, c, m)
		}
		seen[m] = c
	}
	if got := Class(99).Meaning(); got != "Class(99)" {
		t.Errorf("an unknown class means %q", got)
	}
}
