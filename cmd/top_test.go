package cmd

import (
	"strings"
	"testing"
)

// TestTopNeedsATerminal: piped, `top` draws nothing and says what prints
// instead, with the reader's flags.
func TestTopNeedsATerminal(t *testing.T) {
	c := newCLI(t)
	c.emptyDB()
	msg := c.usage("top")
	for _, want := range []string{"stdout is not one", "wasend status --watch --db "} {
		if !strings.Contains(msg, want) {
			t.Errorf("top piped: %q, want %q in it", msg, want)
		}
	}
}
