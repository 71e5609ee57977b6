package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

// TestSandboxDemo runs the README's first command, `campaign run --sandbox`
// on the demo file, with tiers fast enough for a test: it must send to the
// built-in stand-in only, and say so. The stand-in's status webhooks
// reach the run's own receiver: the demo shows delivery figures, and the
// few messages it fails later (131049) wait to be sent again a day later,
// and the run ends rather than wait for them.
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
	if !strings.Contains(r.Stdout, "40 recipients") || !strings.Contains(r.Stderr, "delivery (status webhooks): ") ||
		strings.Contains(r.Stderr, "level=ERROR") {
		t.Errorf("want a summary of 40 recipients and delivery figures, no error\n%s", r)
	}
	// Its template is checked against the sandbox's own, read from it.
	if strings.Contains(r.Stderr, "could not be checked") {
		t.Errorf("the demo starts with a template warning\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "nothing goes to WhatsApp") {
		t.Errorf("stderr does not say that nothing goes to WhatsApp\n%s", r.Stderr)
	}
	if n := len(w.api.Records()); n != 0 {
		t.Errorf("the sandbox run sent %d requests to $WASEND_API_BASE", n)
	}
	rows := w.Rows()
	got := testproc.States(rows)
	if got["sent"]+got["pending"] != 40 || got["pending"] > 10 || len(rows) != 40 {
		t.Errorf("rows %v, want 40 sent or rescheduled", got)
	}
	// The last progress line and the summary count the same sent: a
	// message a 131049 webhook put back to pending leaves both.
	summary := regexp.MustCompile(`, sent (\d+),`).FindStringSubmatch(r.Stdout)
	progress := regexp.MustCompile(`SANDBOX: sent=(\d+) `).FindAllStringSubmatch(r.Stderr, -1)
	if summary == nil || progress == nil {
		t.Fatalf("no summary or no progress line\n%s", r)
	}
	if last := progress[len(progress)-1][1]; last != summary[1] || summary[1] != strconv.Itoa(got["sent"]) {
		t.Errorf("last progress line sent %s, summary sent %s, database sent %d\n%s", last, summary[1], got["sent"], r)
	}
	if got["pending"] > 0 && !strings.Contains(r.Stderr, fmt.Sprintf("back=%d", got["pending"])) {
		t.Errorf("%d rescheduled by a webhook, not shown as put back\n%s", got["pending"], r.Stderr)
	}
	for _, m := range rows {
		if m.State == "pending" && m.ErrorCode != 131049 {
			t.Errorf("row %d waits with %d (%s), want only 131049 from a status webhook", m.ID, m.ErrorCode, m.ErrorMessage)
		}
	}
}
