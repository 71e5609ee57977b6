package cmd

import (
	"bytes"
	"testing"
	"time"

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
