package cmd

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/wasend/wasend/internal/ui"
)

// TestJQEqualsJQ holds `--jq E` to `--json | jq -r -S E` for twenty
// expressions over four commands' JSON: gojq and the jq binary agree, and
// --jq prints strings raw (as -r) and objects with sorted keys (as -S).
func TestJQEqualsJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("the jq binary is not installed (apt-get install jq; .ci/run installs it): --jq is not compared with it")
	}
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(time.Hour)
	show := []string{"campaign", "show", "1"}
	for _, tt := range []struct {
		cmd  []string
		expr string
	}{
		{show, "."},
		{show, ".name"},
		{show, ".id"},
		{show, ".counts"},
		{show, ".counts | to_entries | map(select(.value > 0)) | from_entries"},
		{show, ".errors[] | \"\\(.code)\\t\\(.count)\""},
		{show, "[.errors[].count] | add"},
		{show, ".accounts | map({account, rate: (.sent / .attempts)})"},
		{show, ".accounts | sort_by(-.failed) | .[0].account"},
		{show, ".timing.send_rate_per_second"},
		{show, ".params | join(\",\")"},
		{show, ".dropped_accounts[]? | [.account, .error_code] | @tsv"},
		{show, ".errors | group_by(.code > 1000) | map(length)"},
		{show, "keys"},
		{show, ".nosuch"},
		{show, "[paths(type == \"number\")] | length"},
		{[]string{"status"}, ".accounts | length"},
		{[]string{"status"}, "[.accounts[] | {name, tier, daily_cap}]"},
		{[]string{"account", "list"}, ".[] | select(.tier == \"active\") | .name"},
		{[]string{"campaign", "list"}, "map(.name) | @csv"},
	} {
		t.Run(strings.Join(tt.cmd, "_")+" "+tt.expr, func(t *testing.T) {
			c.t = t
			asJSON := c.ok(append(tt.cmd, "--json")...)
			want := runJQ(t, jq, tt.expr, asJSON)
			got := c.ok(append(tt.cmd, "--jq", tt.expr)...)
			if got != want {
				t.Errorf("--jq %s:\n%s\njq -r -S:\n%s", tt.expr, got, want)
			}
		})
	}
}

func runJQ(t *testing.T, jq, expr, input string) string {
	t.Helper()
	cmd := exec.Command(jq, "-r", "-S", expr)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jq -r -S %s: %v\n%s", expr, err, out)
	}
	return string(out)
}

func TestJQAndTemplateFlags(t *testing.T) {
	c := newCLI(t)
	seedCampaign(t, c.db)
	c.now = showT0.Add(time.Hour)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"a string prints raw", []string{"campaign", "show", "1", "--jq", ".template"}, "spring_sale\n"},
		{"several results, one a line", []string{"campaign", "show", "1", "--jq", ".params[]"}, "name\ncode\n"},
		{"no result prints nothing", []string{"campaign", "show", "1", "--jq", "empty"}, ""},
		{"halt stops quietly", []string{"campaign", "show", "1", "--jq", "1, halt, 2"}, "1\n"},
		{"a template", []string{"campaign", "show", "1", "--template", `{{.name}} is {{.state}}{{"\n"}}`}, "spring.csv is paused\n"},
		{"join and pluck", []string{"campaign", "show", "1", "--template", `{{join ", " (pluck "account" .accounts)}}`}, "fresh-02, main-01"},
		{"numbers: text/template's own, the helpers' as gh's", []string{"campaign", "show", "1", "--template", `{{.timing.avg_attempts}} {{tablerow .timing.avg_attempts .id}}`}, "1.2 1.20\t1\n"},
		{"tablerow piped is tab-separated", []string{"campaign", "show", "1", "--template", `{{range .accounts}}{{tablerow .account .sent .failed}}{{end}}`},
			"fresh-02\t2\t1\nmain-01\t2\t3\n"},
		{"timeago reads the command's clock", []string{"campaign", "show", "1", "--template", `{{timeago .created_at}}, {{timefmt "2006-01-02" .began_at}}`},
			"1 hour ago, 2026-11-30"},
		{"truncate", []string{"campaign", "show", "1", "--template", `{{truncate 5 .pause_reason}}`}, "too …"},
		{"autocolor is plain when piped", []string{"campaign", "show", "1", "--template", `{{autocolor "red" .state}}`}, "paused"},
		{"color is not", []string{"campaign", "show", "1", "--template", `{{color "red+bold" .state}}`}, "\x1b[31;1mpaused\x1b[0m"},
		{"a list", []string{"campaign", "list", "--template", `{{range .}}{{.name}}{{end}}`}, "spring.csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			if got := c.ok(tt.args...); got != tt.want {
				t.Errorf("wasend %s:\n%q\nwant\n%q", strings.Join(tt.args, " "), got, tt.want)
			}
		})
	}

	t.Run("tablerow aligns on a terminal", func(t *testing.T) {
		c.t, c.tty = t, true
		defer func() { c.tty = false }()
		got := c.ok("campaign", "show", "1", "--template", `{{range .accounts}}{{tablerow .account .attempts}}{{end}}{{tablerender}}done{{"\n"}}`)
		want := "fresh-02  4\nmain-01   8\ndone\n"
		if got != want {
			t.Errorf("got\n%q\nwant\n%q", got, want)
		}
	})

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"a bad jq expression", []string{"status", "--jq", ".["}, `jq expression ".[": unexpected EOF`},
		{"an unknown jq function", []string{"status", "--jq", "nosuch(1)"}, "function not defined: nosuch/1"},
		{"a bad template", []string{"status", "--template", "{{.x"}, `template "{{.x"`},
		{"both", []string{"status", "--jq", ".", "--template", "x"}, "--jq and --template cannot be used together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			if msg := c.usage(tt.args...); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want it to say %q", msg, tt.want)
			}
		})
	}

	t.Run("a failing filter is an error naming it", func(t *testing.T) {
		c.t = t
		_, _, err := c.run("campaign", "show", "1", "--jq", ".params.x")
		if err == nil || !strings.Contains(err.Error(), `jq expression ".params.x": expected an object`) {
			t.Errorf("error %v", err)
		}
	})
}

// TestEveryJSONCommandFilters holds that every command with --json also
// has --jq and a Go template flag (--go-template where --template names the
// WhatsApp template), both from addJSONFlag.
func TestEveryJSONCommandFilters(t *testing.T) {
	f := &Factory{IO: ui.Test(io.Discard, io.Discard), Getenv: mapEnv(nil), Now: time.Now}
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Flags().Lookup("json") == nil {
			return
		}
		n++
		for _, name := range []string{"jq", templateFlag(c)} {
			if fl := c.Flags().Lookup(name); fl == nil {
				t.Errorf("%s has --json but no --%s (use addJSONFlag)", c.CommandPath(), name)
			} else if _, ok := fl.Value.(*exportFlag); !ok {
				t.Errorf("%s: --%s is not the output filter", c.CommandPath(), name)
			}
		}
	}
	walk(NewRootCmd(f))
	if n < 15 {
		t.Errorf("%d commands with --json, want at least 15", n)
	}
}

// templateFlag is the Go template flag's name on a built command.
func templateFlag(c *cobra.Command) string {
	if fl := c.Flags().Lookup("go-template"); fl != nil {
		return "go-template"
	}
	return "template"
}
