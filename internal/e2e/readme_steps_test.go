package e2e

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The steps of the README walk-through (readme_test.go, build tag
// walkthrough) and the check that they are README.md's commands, which
// the ordinary test run makes too: a command added to the README, or
// changed, fails here until the walk-through says what it should do.

// step is one README command and what the walk-through expects of it.
type step struct {
	cmd  string // as written in README.md (its trailing # comment aside)
	skip string // why it is not run here, and what holds it instead
	exit int
	// want are texts its screen output must hold.
	want []string
	// repo runs it from the repository root (the README's first block is
	// "from the repository root"); others run in the fresh directory.
	repo bool
	// interrupt: a server; once its screen shows this, Ctrl-C stops it.
	interrupt string
	// timeout bounds it (default 30 s).
	timeout time.Duration
}

// The tour's environment: what an operator has exported before the tour
// (the token it names; the webhook receiver's app secret and verify
// token, which docs/webhooks.md asks for), and WASEND_API_BASE pointing
// the tour at a sandbox instead of Meta — the only thing the walk-through
// adds. The sandbox fails one recipient for good (131026), so that
// `campaign failed` and `retry --all-failed` have a row to show.
const failing = "+447911123456" // promo.csv's second row

var walkSteps = []step{
	// The set-up block.
	{cmd: "go run . campaign run --sandbox testdata/recipients.csv", repo: true, timeout: 100 * time.Second,
		want: []string{"40 recipients", "delivery (status webhooks)", "nothing goes to WhatsApp"}},
	{cmd: "go test -race ./...", skip: "the tests themselves: .ci/run runs exactly this command"},
	// The prose after it.
	{cmd: "wasend status --sandbox", want: []string{"Campaigns", "recipients.csv"}},
	// The tour.
	{cmd: "export WA_TOKEN_MAIN=..."},
	{cmd: "wasend account add main-01 --phone-number-id 1234567890 --tier active --token-env WA_TOKEN_MAIN",
		want: []string{"added account main-01"}},
	{cmd: "wasend campaign check promo.csv --template spring_sale --lang en_US --params name,code",
		want: []string{"promo.csv: 5 rows read, 5 valid"}},
	{cmd: "wasend campaign plan promo.csv --template spring_sale --lang en_US --params name,code",
		want: []string{"recipients: 5", "Share of each account"}},
	{cmd: "wasend campaign run promo.csv --template spring_sale --lang en_US --params name,code",
		want: []string{"campaign 1 finished: 5 recipients, sent 4, failed 1"}},
	{cmd: "wasend status", want: []string{"Accounts", "main-01", "promo.csv"}},
	{cmd: "wasend top", skip: "a full-screen program (the alternate screen hides the shell's history the walk-through reads): " +
		"TestTopInTmux (walkthrough tag) runs it at 80×24 beside a sending campaign, pauses it with p and quits with q"},
	// The tour's number has no WABA id: a warning with its fix, not a failure.
	{cmd: "wasend doctor", want: []string{"account main-01", "no WABA id", "ready to send"}},
	{cmd: "wasend campaign failed 1", want: []string{failing, "131026"}},
	{cmd: "wasend report 1 --html report-1.html", want: []string{"wrote the report of campaign 1 to report-1.html"}},
	{cmd: "wasend campaign retry 1 --all-failed && wasend campaign run --resume 1",
		want: []string{"1 failed message(s) queued again", "sent 4, failed 1"}},
	// Campaign 1's rows no status reported delivered (the tour has no
	// webhooks): all five, screened for another template.
	{cmd: "wasend campaign check --from 1 --segment not-delivered --template wasend_demo --lang en_US --params name,code",
		want: []string{"campaign 1 segment not-delivered: 5 rows read, 5 valid"}},
	{cmd: "wasend webhook serve --addr 127.0.0.1:8080", interrupt: "receiving webhooks on http://127.0.0.1:8080"},
	// The crontab block and the prose after it.
	{cmd: "CRON_TZ=Europe/Berlin", skip: "a crontab line: cmd's TestDocumentedCrontabWorks runs the crontab under env -i"},
	{cmd: "WASEND_DB=/var/lib/wasend/wasend.db", skip: "a crontab line: cmd's TestDocumentedCrontabWorks"},
	{cmd: "0 0 * * * /usr/local/bin/wasend quota reset", skip: "a crontab line: cmd's TestDocumentedCrontabWorks"},
	{cmd: "wasend config get timezone", want: []string{"UTC"}}, // WASEND_TZ, fixed in the tour's new database
	// Exit codes.
	{cmd: "wasend help exit-codes", want: []string{"130"}},
	{cmd: "wasend help environment", want: []string{"WASEND_DB"}},
}

// readmeCommands lists README.md's commands: each line of its fenced code
// blocks (a line ending in \ joined with the next), and each inline code
// span of its prose that starts with "wasend ", spaces collapsed and a
// trailing "# comment" left out.
func readmeCommands(readme string) []string {
	var cmds []string
	add := func(s string) {
		if i := strings.Index(s, " #"); i >= 0 {
			s = s[:i]
		}
		if s = strings.Join(strings.Fields(s), " "); s != "" && !slices.Contains(cmds, s) {
			cmds = append(cmds, s)
		}
	}
	var prose strings.Builder
	in, cont := false, ""
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			prose.WriteString(line + "\n")
			continue
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			cont += s + " "
			continue
		}
		add(cont + line)
		cont = ""
	}
	for _, m := range regexp.MustCompile("`(wasend [^`]+)`").FindAllStringSubmatch(strings.ReplaceAll(prose.String(), "\n", " "), -1) {
		add(m[1])
	}
	return cmds
}

// checkSteps reports the README's commands walkSteps lacks, and the steps
// whose command left the README.
func checkSteps(readmePath string) error {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	cmds := readmeCommands(string(readme))
	var known []string
	for _, s := range walkSteps {
		known = append(known, s.cmd)
	}
	var errs []error
	for _, c := range cmds {
		if !slices.Contains(known, c) {
			errs = append(errs, fmt.Errorf("README.md has %q, and the walk-through has no step for it: add one to walkSteps saying what it should do", c))
		}
	}
	for _, c := range known {
		if !slices.Contains(cmds, c) {
			errs = append(errs, fmt.Errorf("walkSteps has %q, no longer in README.md: remove or update the step", c))
		}
	}
	return errors.Join(errs...)
}

// TestREADMEStepsMatch: the walk-through has a step for every command of
// README.md, and none for a command it no longer has.
func TestREADMEStepsMatch(t *testing.T) {
	if err := checkSteps("../../README.md"); err != nil {
		t.Error(err)
	}
}

func TestReadmeCommands(t *testing.T) {
	readme := "# T\n\nRun `wasend status --sandbox` or `wasend\nhelp exit-codes`, not `go build`.\n\n" +
		"```sh\nwasend a   --x 1   # a comment\n\nwasend b \\\n  --y 2\nwasend a --x 1\n```\n\n" +
		"```\nCRON_TZ=UTC\n0 0 * * * /usr/local/bin/wasend quota reset\n```\n"
	want := []string{"wasend a --x 1", "wasend b --y 2", "CRON_TZ=UTC", "0 0 * * * /usr/local/bin/wasend quota reset",
		"wasend status --sandbox", "wasend help exit-codes"}
	if got := readmeCommands(readme); !slices.Equal(got, want) {
		t.Errorf("readmeCommands:\n%q\nwant\n%q", got, want)
	}
	// A step list that lacks one, or has one too many, is refused.
	dir := t.TempDir()
	path := dir + "/README.md"
	if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	err := checkSteps(path)
	if err == nil || !strings.Contains(err.Error(), `README.md has "wasend a --x 1"`) ||
		!strings.Contains(err.Error(), `walkSteps has "wasend status", no longer in README.md`) {
		t.Errorf("checkSteps against another README: %v", err)
	}
}
