package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// seedRetarget is seedCampaign's campaign 1 with what Meta and the people
// said since: line 2 delivered and answered, line 3 read, line 4
// delivered. Its other rows: 5 and 6 failed 131026, 7 failed 131050 (its
// number suppressed), 8 sent without a status, 9 unknown, 10 failed 190,
// 11 in flight, 12 pending.
func seedRetarget(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	seedCampaign(t, c.db)
	at := showT0.Add(2 * time.Hour)
	file := statusFile(t,
		statusLine(t, "wamid.HBgL02", "delivered", "4915100000000", "", at, 0),
		statusLine(t, "wamid.HBgL03", "read", "4915100000001", "", at, 0),
		statusLine(t, "wamid.HBgL04", "delivered", "4915100000002", "", at, 0),
		inboundLine(t, "+4915100000000", "wamid.in1", at.Add(time.Minute), "text", textMsg("Yes please", "wamid.HBgL02")),
	)
	c.now = showT0.Add(48 * time.Hour) // past the repeat guard's 24 h
	c.ok("webhook", "import", file)
	return c
}

// Each segment selects its rows of the source campaign, and check screens
// them as an import would: the suppressed number of line 7 is skipped,
// named by its line in the source file.
func TestRetargetSegments(t *testing.T) {
	c := seedRetarget(t)
	msg := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	for _, tt := range []struct {
		segment          string
		rows, suppressed int
		lines            []int // the skipped rows' lines
	}{
		{"read", 1, 0, nil},
		{"delivered-not-read", 2, 0, nil},
		{"replied", 1, 0, nil},
		{"not-replied", 3, 0, nil},        // lines 3, 4, 8
		{"not-delivered", 6, 1, []int{7}}, // lines 5–10: neither in flight nor pending
		{"failed:131026", 2, 0, nil},      // lines 5, 6
		{"FAILED:190", 1, 0, nil},         // line 10
		{"failed:131050", 1, 1, []int{7}}, // suppressed since
		{"failed:131047", 0, 0, nil},      // none: an error
	} {
		t.Run(tt.segment, func(t *testing.T) {
			c.t = t
			args := append([]string{"campaign", "check", "--from", "1", "--segment", tt.segment, "--json"}, msg...)
			if tt.rows == 0 {
				_, _, err := c.run(args...)
				if !errors.Is(err, runner.ErrNothingToSend) || !strings.Contains(err.Error(), "no row in segment failed:131047") {
					t.Fatalf("err = %v; want nothing to send, naming the segment", err)
				}
				if code := exitCode(err, &bytes.Buffer{}); code != ExitError {
					t.Errorf("exit %d, want %d", code, ExitError)
				}
				return
			}
			var got checkJSON
			if err := json.Unmarshal([]byte(c.ok(args...)), &got); err != nil {
				t.Fatal(err)
			}
			if got.Rows != tt.rows || got.Suppressed != tt.suppressed || got.Valid != tt.rows-tt.suppressed {
				t.Errorf("check = %d rows, %d valid, %d suppressed; want %d rows, %d suppressed", got.Rows, got.Valid, got.Suppressed, tt.rows, tt.suppressed)
			}
			var lines []int
			for _, p := range got.Problems {
				lines = append(lines, p.Line)
			}
			if len(lines) != len(tt.lines) || (len(lines) > 0 && lines[0] != tt.lines[0]) {
				t.Errorf("skipped lines %v, want %v (%+v)", lines, tt.lines, got.Problems)
			}
		})
	}
}

// A retargeted campaign sends the segment's rows with the values they had,
// and the same command finds the same campaign again: its identity is the
// source campaign and the segment, read once when it was made.
func TestRetargetRun(t *testing.T) {
	c := seedRetarget(t)
	run := []string{"campaign", "run", "--sandbox", "--from", "1", "--segment", "failed:131026",
		"--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	out := c.ok(run...)
	if !strings.Contains(out, "campaign 2 finished: 2 recipients, sent 2") {
		t.Fatalf("run: %s", out)
	}
	// Every row sent, replied to or not: lines, numbers and parameters
	// are the source's.
	if got := sentRows(t, c.db, 2); got != "5 +4915100000003 [Name3]; 6 +4915100000004 [Name4]" {
		t.Errorf("campaign 2's rows: %s", got)
	}
	// Line 9 (unknown) joins the segment after campaign 2 was made: the
	// same command finds campaign 2, finished, and sends nothing.
	out = c.ok(run...)
	if !strings.Contains(out, "campaign 2 already finished") {
		t.Errorf("the same command again: %s", out)
	}
	if n := len(c.status().Campaigns); n != 2 {
		t.Errorf("%d campaigns, want 2", n)
	}
	// Another segment is another campaign, named after its source.
	out = c.ok("campaign", "run", "--sandbox", "--from", "1", "--segment", "delivered-not-read",
		"--template", "spring_sale", "--lang", "en_US", "--params", "code")
	if !strings.Contains(out, "campaign 3 finished: 2 recipients, sent 2") {
		t.Fatalf("run: %s", out)
	}
	if got := sentRows(t, c.db, 3); got != "2 +4915100000000 [SPRING]; 4 +4915100000002 [SPRING]" {
		t.Errorf("campaign 3's rows: %s", got)
	}
	if list := c.ok("campaign", "list"); !strings.Contains(list, "spring.csv delivered-not-read") {
		t.Errorf("campaign 3 is not named after its source and segment:\n%s", list)
	}
}

// Bad retargeting flags say what is wrong and what would do.
func TestRetargetBadInput(t *testing.T) {
	c := seedRetarget(t)
	msg := []string{"--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "1", "--segment", "opened"}, `unknown segment "opened"; valid segments: not-delivered, delivered-not-read, read, replied, not-replied, failed:CODE`},
		{[]string{"--from", "1", "--segment", "clicked"}, "click tracking does not exist yet"},
		{[]string{"--from", "1", "--segment", "failed"}, "name the error code, e.g. failed:131026"},
		{[]string{"--from", "1", "--segment", "failed:x"}, "must be a number"},
		{[]string{"--from", "1"}, "--from 1 needs --segment: not-delivered"},
		{[]string{"--segment", "read", "list.csv"}, "--segment read needs --from ID"},
		{[]string{"--from", "1", "--segment", "read", "list.csv"}, `"list.csv" is not expected with --from 1`},
	} {
		for _, verb := range []string{"run", "check", "plan"} {
			got := c.usage(append(append([]string{"campaign", verb}, tt.args...), msg...)...)
			if !strings.Contains(got, tt.want) {
				t.Errorf("campaign %s %v: %q, want it to say %q", verb, tt.args, got, tt.want)
			}
		}
	}
	for _, verb := range []string{"run", "check", "plan"} {
		_, _, err := c.run(append([]string{"campaign", verb, "--from", "7", "--segment", "read"}, msg...)...)
		if err == nil || !strings.Contains(err.Error(), "--from 7: no such campaign") {
			t.Errorf("campaign %s --from 7: %v; want no such campaign", verb, err)
		}
	}
	// A column the source kept no values of.
	_, _, err := c.run("campaign", "check", "--from", "1", "--segment", "read", "--text", "Hi {{first_name}}")
	if err == nil || !strings.Contains(err.Error(), `unknown column "first_name"`) || !strings.Contains(err.Error(), "in its columns phone, name, code") {
		t.Errorf("unknown column: %v", err)
	}
}

// sentRows lists campaign id's sent rows as "line phone [params]; …".
func sentRows(t *testing.T, db string, id int64) string {
	t.Helper()
	st, err := store.Open(t.Context(), db, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ms []campaign.Message
	for _, k := range []campaign.SegmentKind{campaign.SegmentReplied, campaign.SegmentNotReplied} {
		part, err := readmodel.New(st).SegmentRows(t.Context(), id, campaign.Segment{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, part...)
	}
	slices.SortFunc(ms, func(a, b campaign.Message) int { return a.Line - b.Line })
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%d %s %v", m.Line, m.Phone, m.Params))
	}
	return strings.Join(out, "; ")
}
