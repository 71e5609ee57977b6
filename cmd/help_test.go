package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/spf13/cobra"

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
		// description or the examples wraps mid-word. (The flags' usage
		// lines are cobra's.)
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
