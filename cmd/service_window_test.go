package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The customer service window from the command line: export says per
// recipient whether it is open and until when; check counts a --text
// list's numbers without one, and --ignore-window counts none; a template
// refuses --ignore-window.
func TestServiceWindowCommands(t *testing.T) {
	c := seedRetarget(t) // +4915100000000 wrote at showT0 + 2h01
	c.now = showT0.Add(3 * time.Hour)
	got := map[string]string{}
	for _, r := range parseExport(t, c.ok("campaign", "export", "1")) {
		got[r["phone"]] = r["wrote_at"] + "|" + r["window"]
	}
	if w := got["+4915100000000"]; w != "2026-11-30T16:01:00Z|open until 2026-12-01T16:01:00Z" {
		t.Errorf("export window of the one who wrote: %q", w)
	}
	if w := got["+4915100000001"]; w != "|closed" {
		t.Errorf("export window of one who never wrote: %q", w)
	}
	c.now = showT0.Add(27 * time.Hour)
	for _, r := range parseExport(t, c.ok("campaign", "export", "1")) {
		if r["window"] != "closed" {
			t.Errorf("a day after, %s's window is %q, want closed", r["phone"], r["window"])
		}
	}

	c.now = showT0.Add(3 * time.Hour)
	list := writePreflightList(t, "people.csv", 0, 3) // +4915100000000 …
	var js checkJSON
	if err := json.Unmarshal([]byte(c.ok("campaign", "check", list, "--text", "Hi", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Valid != 1 || js.NoWindow != 2 || len(js.Problems) != 2 || !strings.Contains(js.Problems[0].Reason, "no customer service window: never wrote") {
		t.Errorf("check --text: %+v; want 1 valid, 2 without a window", js)
	}
	if err := json.Unmarshal([]byte(c.ok("campaign", "check", list, "--text", "Hi", "--ignore-window", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Valid != 3 || js.NoWindow != 0 {
		t.Errorf("check --text --ignore-window: %+v; want all 3 valid", js)
	}
	if msg := c.usage("campaign", "check", list, "--template", "spring_sale", "--lang", "en_US", "--ignore-window"); !strings.Contains(msg, "--ignore-window applies to --text messages only") {
		t.Errorf("--ignore-window with a template: %q", msg)
	}
}
