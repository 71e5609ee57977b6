package cmd

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProgressJSON runs a campaign on the sandbox with --log-format json
// and stderr piped: progress comes as JSON lines (issue 29), "status"
// lines with every documented field, then one "summary" whose figures are
// the ones `campaign show --json` prints afterwards.
func TestProgressJSON(t *testing.T) {
	c := newCLI(t)
	c.now = time.Now().UTC() // the run's engine stamps its sends on the real clock
	list := filepath.Join(t.TempDir(), "list.csv")
	rows := "phone,name\n"
	for i := range 8 {
		rows += "+49151234567" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + ",A\n"
	}
	if err := os.WriteFile(list, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := c.run("--log-format", "json", "campaign", "run", list, "--sandbox", "--text", "Hi", "--ignore-window")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	var status, summary []map[string]any
	for _, line := range strings.Split(errOut, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue // the run's notes, log records below
		}
		switch rec["type"] {
		case "status":
			status = append(status, rec)
		case "summary":
			if len(summary) > 0 || len(status) == 0 {
				t.Errorf("a summary not last after status lines: %s", line)
			}
			summary = append(summary, rec)
		case nil:
		default:
			t.Errorf("a progress line of type %v: %s", rec["type"], line)
		}
		if strings.Contains(line, "eta ") || strings.Contains(line, "remaining ") {
			t.Errorf("a text progress line with --progress json: %s", line)
		}
	}
	if len(status) == 0 || len(summary) != 1 {
		t.Fatalf("%d status lines, %d summaries, want some and one:\n%s", len(status), len(summary), errOut)
	}
	want := []string{"campaign", "label", "percent_done", "pending", "put_back", "rate", "retries", "seconds_remaining", "sent", "failed", "time", "total", "type", "unknown", "waiting"}
	slices.Sort(want)
	for _, rec := range status {
		if got := slices.Sorted(maps.Keys(rec)); !slices.Equal(got, want) {
			t.Errorf("status line fields %v, want %v", got, want)
		}
	}
	var show showJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "show", "1", "--sandbox", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	sum := summary[0]
	total := 0
	for state, n := range show.Counts {
		total += n
		if got := sum["counts"].(map[string]any)[state]; got != float64(n) {
			t.Errorf("summary counts %s = %v, show --json %d", state, got, n)
		}
	}
	for field, n := range map[string]int{"sent": show.Counts["sent"], "failed": show.Counts["failed"], "unknown": show.Counts["unknown"],
		"pending": show.Counts["pending"], "expired": show.Counts["expired"], "total": total, "campaign": int(show.ID)} {
		if sum[field] != float64(n) {
			t.Errorf("summary %s = %v, show --json says %d", field, sum[field], n)
		}
	}
	if show.Counts["sent"] == 0 {
		t.Errorf("nothing sent: %v", show.Counts)
	}
}

// --progress text keeps the plain lines under --log-format json; a
// mode that is not one is a usage error.
func TestProgressFlag(t *testing.T) {
	c := newCLI(t)
	c.now = time.Now().UTC()
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone,name\n+4915123456700,A\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := c.run("--log-format", "json", "campaign", "run", list, "--sandbox", "--text", "Hi", "--ignore-window", "--progress", "text")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if strings.Contains(errOut, `"type":"status"`) || !strings.Contains(errOut, "SANDBOX: sent=1 left=0/1") {
		t.Errorf("--progress text: want plain lines only:\n%s", errOut)
	}
	if msg := c.usage("campaign", "run", list, "--sandbox", "--text", "Hi", "--ignore-window", "--progress", "yaml"); !strings.Contains(msg, `--progress "yaml": want auto, text or json`) {
		t.Errorf("usage error %q", msg)
	}
}
