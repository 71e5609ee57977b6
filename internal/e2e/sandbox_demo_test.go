package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestSandboxDemo runs the README's first command, `campaign run --sandbox`
// on the demo file, with tiers fast enough for a test: it must send to the
// built-in stand-in only, and say so.
func TestSandboxDemo(t *testing.T) {
	// The world's API is unused: --sandbox starts its own.
	w := newWorld(t, sandbox.Options{})
	csv, err := filepath.Abs("../../testdata/recipients.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range []string{"new", "warm", "active"} {
		w.OK("--sandbox", "tier", "set", tier, "--rate", "50", "--burst", "10")
	}
	r := w.OK("--sandbox", "campaign", "run", csv)
	if !strings.Contains(r.Stdout, "sent 40,") {
		t.Errorf("want a summary with \"sent 40\"\n%s", r)
	}
	if !strings.Contains(r.Stderr, "nothing goes to WhatsApp") {
		t.Errorf("stderr does not say that nothing goes to WhatsApp\n%s", r.Stderr)
	}
	if n := len(w.api.Records()); n != 0 {
		t.Errorf("the sandbox run sent %d requests to $WASEND_API_BASE", n)
	}
	rows := w.Rows()
	if got := testproc.States(rows); got["sent"] != 40 || len(rows) != 40 {
		t.Errorf("rows %v, want 40 sent", got)
	}
}
