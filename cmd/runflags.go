package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// acceptSendFlags lets a command that reads a recipient file without
// sending it (check, import, plan, preview) take `campaign run`'s whole
// command line: the sending flags are accepted, hidden from its help, and
// ignored with a note saying so — docs/recipients.md's "[the run flags]".
func acceptSendFlags(f *Factory, cmd *cobra.Command) {
	var ignored runOptions
	send := pflag.NewFlagSet("send", pflag.ContinueOnError)
	tmp := &cobra.Command{}
	addSendFlags(tmp, &ignored)
	tmp.Flags().StringVar(&ignored.Name, "name", "", "")
	send.AddFlagSet(tmp.Flags())
	var names []string
	send.VisitAll(func(fl *pflag.Flag) {
		if cmd.Flags().Lookup(fl.Name) != nil {
			return // the command has its own
		}
		fl.Hidden = true
		cmd.Flags().AddFlag(fl)
		names = append(names, fl.Name)
	})
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		var set []string
		for _, n := range names {
			if c.Flags().Changed(n) {
				set = append(set, "--"+n)
			}
		}
		if len(set) > 0 {
			where := "they apply to sending"
			if c.Name() == "import" {
				where = "they apply to sending: give them to wasend campaign run --resume with the id this import prints"
			}
			f.IO.Infof("note: campaign %s ignores %s (%s)", c.Name(), strings.Join(set, ", "), where)
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// progressJSON says whether progress goes as JSON lines (--progress).
func progressJSON(f *Factory, mode string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "", "auto":
		return !f.IO.IsStderrTTY() && strings.EqualFold(strings.TrimSpace(f.LogFormat), "json"), nil
	case "text":
		return false, nil
	case "json":
		return true, nil
	}
	return false, usagef("--progress %q: want auto, text or json", mode)
}
