package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/ui"
)

// importList imports a campaign of n recipients and returns its file.
func (c *cli) importList(name string, n int) string {
	c.t.Helper()
	list := filepath.Join(c.t.TempDir(), name)
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range n {
		b.WriteString("+49151234567" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + ",P\n")
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o600); err != nil {
		c.t.Fatal(err)
	}
	// The lists share their first numbers and message: --again keeps each
	// its own campaign instead of continuing the unfinished one before.
	c.ok("campaign", "import", list, "--template", "t", "--lang", "en", "--params", "name", "--again")
	return list
}

// exit runs a command that must fail and returns its exit code and stderr
// as the user sees them.
func (c *cli) exit(args ...string) (int, string) {
	c.t.Helper()
	_, errOut, err := c.run(args...)
	var msg bytes.Buffer
	code := exitCode(err, &msg)
	return code, errOut + msg.String()
}

func TestCampaignPauseCancel(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	c.env["WA_TOKEN_MAIN"], c.env["WA_TOKEN_FRESH"] = "t1", "t2"
	c.importList("list.csv", 3)

	if _, errOut, err := c.run("campaign", "pause", "1"); err != nil || !strings.Contains(errOut, "campaign 1 \"list.csv\" paused") ||
		!strings.Contains(errOut, "wasend campaign resume 1") {
		t.Fatalf("pause: %v\n%s", err, errOut)
	}
	if s := c.status(); s.Campaigns[0].State != "paused" || !strings.Contains(s.Campaigns[0].PauseReason, "operator") {
		t.Errorf("status after pause: %s (%s)", s.Campaigns[0].State, s.Campaigns[0].PauseReason)
	}
	if _, errOut, err := c.run("campaign", "pause", "1"); err != nil || !strings.Contains(errOut, "already paused") {
		t.Errorf("second pause: %v\n%s", err, errOut)
	}
	if code, msg := c.exit("campaign", "run", "--resume", "1"); code != ExitPaused {
		t.Errorf("run of a paused campaign: exit %d, want %d\n%s", code, ExitPaused, msg)
	}

	if _, errOut, err := c.run("campaign", "cancel", "1"); err != nil || !strings.Contains(errOut, "3 pending message(s) will never be sent") {
		t.Fatalf("cancel: %v\n%s", err, errOut)
	}
	got := c.status().Campaigns[0]
	if got.State != "cancelled" || got.Pending != 3 || got.Total != 3 || got.FinishedAt == nil || got.ETA != nil {
		t.Errorf("status after cancel: %+v, want cancelled with its 3 pending rows counted and no ETA", got)
	}
	for _, tt := range []struct {
		args     []string
		wantCode int
		wantMsg  string
	}{
		{[]string{"campaign", "run", "--resume", "1"}, ExitCancelled, "campaign 1 cancelled: 3 recipients, sent 0"},
		{[]string{"campaign", "resume", "1"}, ExitCancelled, "a cancelled campaign is final"},
		{[]string{"campaign", "retry", "1", "--unknown"}, ExitCancelled, "a cancelled campaign is final"},
		{[]string{"campaign", "pause", "1"}, ExitError, "campaign 1 can't be paused: it has ended (cancelled)"},
		{[]string{"campaign", "pause", "9"}, ExitError, "campaign 9: not found"},
		{[]string{"campaign", "cancel", "x"}, ExitUsage, `campaign ID "x"`},
	} {
		out, errOut, err := c.run(tt.args...)
		var msg bytes.Buffer
		if code := exitCode(err, &msg); code != tt.wantCode || !strings.Contains(out+errOut+msg.String(), tt.wantMsg) {
			t.Errorf("wasend %s: exit %d, want %d with %q\nstdout: %s\nstderr: %s%s", strings.Join(tt.args, " "), code, tt.wantCode, tt.wantMsg, out, errOut, msg.String())
		}
	}
	if _, errOut, err := c.run("campaign", "cancel", "1"); err != nil || !strings.Contains(errOut, "already cancelled") {
		t.Errorf("second cancel: %v\n%s", err, errOut)
	}
}

func TestCampaignDeleteAsks(t *testing.T) {
	c := newCLI(t)
	c.importList("one.csv", 2)
	c.importList("two.csv", 3)
	c.importList("three.csv", 4)
	campaigns := func() []int64 {
		var ids []int64
		for _, cj := range c.status().Campaigns {
			ids = append(ids, cj.ID)
		}
		return ids
	}

	// Piped, without --yes: refused before anything is read or deleted.
	if msg := c.usage("campaign", "delete", "1"); !strings.Contains(msg, "--yes") {
		t.Errorf("delete without a terminal: %q, want it to ask for --yes", msg)
	}
	// On a terminal: asks, and anything but yes keeps the campaign.
	c.stdinTTY = true
	for _, answer := range []string{"n\n", "\n", ""} {
		c.stdin = answer
		_, errOut, err := c.run("campaign", "delete", "1")
		if err == nil || !strings.Contains(err.Error(), "nothing deleted") || !strings.Contains(errOut, `Delete campaign 1 "one.csv"`) ||
			!strings.Contains(errOut, "2 recipients") {
			t.Errorf("answer %q: %v\n%s", answer, err, errOut)
		}
	}
	if got := campaigns(); len(got) != 3 {
		t.Fatalf("campaigns after declining: %v", got)
	}
	c.stdin = "y\n"
	if _, errOut, err := c.run("campaign", "delete", "1"); err != nil || !strings.Contains(errOut, "deleted campaign 1") {
		t.Fatalf("delete confirmed: %v\n%s", err, errOut)
	}
	c.stdinTTY, c.stdin = false, ""
	c.ok("campaign", "delete", "3", "--yes")
	if got := campaigns(); len(got) != 1 || got[0] != 2 {
		t.Errorf("campaigns after deleting 1 and 3: %v, want [2]", got)
	}
	if _, _, err := c.run("campaign", "delete", "3", "--yes"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("delete of a deleted campaign: %v", err)
	}
}

func TestCampaignRename(t *testing.T) {
	c := newCLI(t)
	c.importList("list.csv", 1)
	if _, errOut, err := c.run("campaign", "rename", "1", "spring, second wave"); err != nil ||
		!strings.Contains(errOut, `renamed from "list.csv" to "spring, second wave"`) {
		t.Fatalf("rename: %v\n%s", err, errOut)
	}
	if got := c.status().Campaigns[0].Name; got != "spring, second wave" {
		t.Errorf("name after rename: %q", got)
	}
	if msg := c.usage("campaign", "rename", "1", " "); !strings.Contains(msg, "empty") {
		t.Errorf("rename to blank: %q", msg)
	}
	if msg := c.usage("campaign", "rename", "1"); !strings.Contains(msg, "arg") {
		t.Errorf("rename without a name: %q", msg)
	}
}

func TestAccountRemove(t *testing.T) {
	c := newCLI(t)
	c.addAccounts()
	_, _, err := c.run("account", "add", "twin", "--phone-number-id", "1234567890")
	if err == nil || !strings.Contains(err.Error(), "phone number id 1234567890 is already in use by account main-01") {
		t.Errorf("add of main-01's number: %v, want an error naming main-01", err)
	}
	_, _, err = c.run("account", "set", "fresh-02", "--phone-number-id", "1234567890")
	if err == nil || !strings.Contains(err.Error(), "in use by account main-01") {
		t.Errorf("set to main-01's number: %v, want an error naming main-01", err)
	}

	if _, errOut, err := c.run("account", "remove", "main-01"); err != nil || !strings.Contains(errOut, "removed account main-01") {
		t.Fatalf("remove: %v\n%s", err, errOut)
	}
	checkRows(t, "account list after remove", c.table("account", "list"), []map[string]string{
		{"NAME": "fresh-02"},
	})
	if _, _, err := c.run("account", "remove", "main-01"); err == nil || !strings.Contains(err.Error(), `account "main-01": not found`) {
		t.Errorf("second remove: %v", err)
	}
	// The name and the number are free again.
	c.ok("account", "add", "main-01", "--phone-number-id", "1234567890", "--tier", "warm")
	checkRows(t, "account list after re-adding", c.table("account", "list"), []map[string]string{
		{"NAME": "fresh-02"}, {"NAME": "main-01", "TIER": "warm"},
	})
}

// Accounts sharing a number (kept from a database made before that was
// refused) are named in a warning.
func TestWarnSharedNumbers(t *testing.T) {
	acct := func(name, number string) campaign.AccountStatus {
		return campaign.AccountStatus{Account: campaign.Account{Name: name, PhoneNumberID: number}}
	}
	for _, tt := range []struct {
		name  string
		accts []campaign.AccountStatus
		want  []string
	}{
		{"none", []campaign.AccountStatus{acct("a", "1"), acct("b", "2")}, nil},
		{"a pair and a triple", []campaign.AccountStatus{acct("a", "1"), acct("b", "2"), acct("c", "1"), acct("d", "2"), acct("e", "2")}, []string{
			"accounts a, c all send from phone number id 1: together they go at 2× its rate; remove all but one (`wasend account remove c`)",
			"accounts b, d, e all send from phone number id 2: together they go at 3× its rate",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			warnSharedNumbers(ui.Test(&out, &errOut), tt.accts)
			got := errOut.String()
			if len(tt.want) == 0 && got != "" {
				t.Errorf("warned %q, want nothing", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("warnings lack %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestDeleteKeepsWhomItMessaged: a deleted campaign's sends still count
// for the repeat guard (the same template within 24 h), for
// --skip-contacted-within and for the portfolio's reach, as they do at
// Meta: re-importing the same list a day later, less an hour, messages
// nobody again; after 24 h the same template may go again.
func TestDeleteKeepsWhomItMessaged(t *testing.T) {
	c := newCLI(t)
	// The run's engine stamps its sends on the real clock; the commands
	// here read on c.now.
	c.now = time.Now().UTC()
	list := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(list, []byte("phone,name\n+4915123456700,A\n+4915123456701,B\n+4915123456702,C\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	msg := []string{"--sandbox", "--template", "spring_sale", "--lang", "en_US", "--params", "name"}
	if _, errOut, err := c.run(append([]string{"campaign", "run", list}, msg...)...); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	if n := c.status().Campaigns[0].Sent; n != 3 {
		t.Fatalf("%d sent, want 3", n)
	}
	used := func() map[string]int {
		var ps []report.Portfolio
		if err := json.Unmarshal([]byte(c.ok("portfolio", "list", "--json", "--sandbox")), &ps); err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, p := range ps {
			out[p.Name] = p.Used24h
		}
		return out
	}
	before := used()
	if total := func() (n int) {
		for _, u := range before {
			n += u
		}
		return n
	}(); total != 3 {
		t.Errorf("portfolio reach %v before the delete, want the 3 recipients", before)
	}
	c.stdin, c.stdinTTY = "y\n", true
	_, errOut, err := c.run("campaign", "delete", "1", "--sandbox")
	if err != nil {
		t.Fatalf("delete: %v\n%s", err, errOut)
	}
	for _, want := range []string{"Kept: whom it messaged and when", "Deleted: its 3 recipients' rows"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the prompt does not say %q:\n%s", want, errOut)
		}
	}
	c.stdin, c.stdinTTY = "", false
	if after := used(); !maps.Equal(before, after) {
		t.Errorf("portfolio reach %v after the delete, %v before", after, before)
	}

	c.now = c.now.Add(23 * time.Hour)
	for _, args := range [][]string{
		append([]string{"campaign", "run", list}, msg...),
		append([]string{"campaign", "import", list, "--again", "--skip-contacted-within", "48h"}, msg...),
	} {
		_, errOut, err = c.run(args...)
		if !errors.Is(err, runner.ErrNothingToSend) {
			t.Errorf("%s 23 h later: %v, want nothing to send\n%s", strings.Join(args[:2], " "), err, errOut)
		}
	}
	if s := c.status(); len(s.Campaigns) != 0 {
		t.Errorf("campaigns %+v, want none: everybody was messaged within 24 h", s.Campaigns)
	}
	c.now = c.now.Add(2 * time.Hour)
	c.ok(append([]string{"campaign", "import", list}, msg...)...)
	if s := c.status(); len(s.Campaigns) != 1 || s.Campaigns[0].Pending != 3 {
		t.Errorf("campaigns %+v, want one of 3 pending after 24 h", s.Campaigns)
	}
}
