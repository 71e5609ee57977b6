package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/ui"
)

// TestEveryCommandIsDocumented: each command has a one-line summary, and
// each one that runs has a longer description and examples in --help.
func TestEveryCommandIsDocumented(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(nil), Now: time.Now}
	root := NewRootCmd(f)
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		if c.Short == "" {
			t.Errorf("%s: no one-line summary (Short)", c.CommandPath())
		}
		if c.Runnable() && !c.HasSubCommands() && c.Name() != "completion" {
			if c.Long == "" {
				t.Errorf("%s: no longer description (Long)", c.CommandPath())
			}
			if c.Example == "" {
				t.Errorf("%s: no examples (Example)", c.CommandPath())
			}
		}
		// --help is read on an 80-column terminal: a longer line of the
		// description or the examples wraps mid-word. (Help wraps what is
		// longer, but text written to fit reads better than text wrapped:
		// TestHelpFitsEightyColumns holds the rest of --help.)
		for _, text := range []struct{ what, s string }{{"description", c.Long}, {"example", c.Example}} {
			for i, l := range strings.Split(text.s, "\n") {
				if w := runewidth.StringWidth(l); w > 80 {
					t.Errorf("%s: --help %s line %d is %d columns wide: %q", c.CommandPath(), text.what, i+1, w, l)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestCompletion: shell completion scripts come from Cobra for bash, zsh
// and fish.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		c := newCLI(t)
		out := c.ok("completion", shell)
		if len(out) < 100 {
			t.Errorf("completion %s: %d bytes", shell, len(out))
		}
	}
}

// TestHelpFitsEightyColumns: every command's --help, piped (80 columns),
// has no line wider than 80 — the description, the usage line, command
// summaries and flag usages are wrapped — and no flag shows a value name
// made of words (pflag takes a backquoted phrase in a usage as the name).
func TestHelpFitsEightyColumns(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	root := NewRootCmd(&Factory{IO: ui.Test(nil, nil), Getenv: mapEnv(nil), Now: time.Now})
	walk(root, nil)
	if len(paths) < 50 {
		t.Fatalf("walked %d commands", len(paths))
	}
	for _, path := range paths {
		var out, errOut bytes.Buffer
		f := &Factory{IO: ui.Test(&out, &errOut), Getenv: mapEnv(nil), Now: time.Now}
		root := NewRootCmd(f)
		root.SetArgs(append(append([]string(nil), path...), "--help"))
		if err := root.Execute(); err != nil {
			t.Errorf("%v --help: %v", path, err)
			continue
		}
		name := strings.Join(append([]string{"wasend"}, path...), " ")
		if !strings.Contains(out.String(), "Usage:") && !strings.Contains(out.String(), "\n") {
			t.Errorf("%s --help printed %q", name, out.String())
		}
		for i, l := range strings.Split(out.String(), "\n") {
			if w := runewidth.StringWidth(l); w > 80 {
				t.Errorf("%s --help line %d is %d columns wide: %q", name, i+1, w, l)
			}
		}
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if v, _ := pflag.UnquoteUsage(fl); strings.Contains(v, " ") {
				t.Errorf("%s --%s shows the value name %q: backquotes in a usage name its value", name, fl.Name, v)
			}
		})
	}
}

// TestHelpWrapsToTerminal: on a terminal, help fits its width; a line
// that fits is left as written.
func TestHelpWrapsToTerminal(t *testing.T) {
	for _, width := range []int{60, 120} {
		var out bytes.Buffer
		f := &Factory{IO: ui.Test(&out, &out), Getenv: mapEnv(nil), Now: time.Now}
		f.IO.SetTTY(true, true)
		f.IO.SetWidth(width)
		root := NewRootCmd(f)
		root.SetArgs([]string{"campaign", "run", "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, l := range strings.Split(out.String(), "\n") {
			widest = max(widest, runewidth.StringWidth(l))
		}
		if widest > width || widest < width-20 {
			t.Errorf("at %d columns the widest help line is %d:\n%s", width, widest, out.String())
		}
	}
	tests := []struct {
		line   string
		width  int
		indent int
		want   string
	}{
		{"short", 80, 4, "short"},
		{"  one two three", 9, 4, "  one two\n    three"},
		{"  averyverylongword next", 10, 2, "  averyverylongword\n  next"},
		{"a b", 0, 2, "a b"},
	}
	for _, tt := range tests {
		if got := wrapLine(tt.line, tt.width, tt.indent); got != tt.want {
			t.Errorf("wrapLine(%q, %d, %d) = %q, want %q", tt.line, tt.width, tt.indent, got, tt.want)
		}
	}
}

// TestSummaryLineKeepsItsColumn: a command summary too long for the line
// wraps under itself; the name's padding stays.
func TestSummaryLineKeepsItsColumn(t *testing.T) {
	got := summaryLine("webhook", 10, "Receive Meta's delivery webhooks", 40)
	want := "  webhook    Receive Meta's delivery\n             webhooks"
	if got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
}

// TestColumnsAsRunewidth: the ASCII shortcut counts what runewidth counts.
func TestColumnsAsRunewidth(t *testing.T) {
	for _, s := range []string{"", "campaign run", "--max-cost ~1.5 {x}", "naïve", "日本語", "tab\there", "e\u0301", "👍🏽 ok"} {
		if got, want := columns(s), runewidth.StringWidth(s); got != want {
			t.Errorf("columns(%q) = %d, runewidth %d", s, got, want)
		}
	}
}
