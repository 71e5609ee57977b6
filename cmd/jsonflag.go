package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wasend/wasend/internal/ui"
)

// addJSONFlag gives cmd the --json flag every command with machine-readable
// output has, in one wording, and --jq and --template, which imply --json
// and filter what it prints; the command prints with f.IO.JSON when asJSON
// is set. (gh's pkg/cmdutil/json_flags.go is the model.)
func addJSONFlag(cmd *cobra.Command, asJSON *bool) {
	fl := cmd.Flags()
	fl.BoolVar(asJSON, "json", false, "print JSON")
	tplName := "template"
	if fl.Lookup("template") != nil {
		// The command's --template names the WhatsApp template
		// (campaign check and plan).
		tplName = "go-template"
	}
	chosen := new(string)
	fl.Var(&exportFlag{name: "jq", chosen: chosen, asJSON: asJSON, parse: func(s string) (ui.Exporter, error) { return ui.ParseJQ(s) }},
		"jq", "filter the JSON output with a jq `expression` (implies --json; strings print raw)")
	fl.Var(&exportFlag{name: tplName, chosen: chosen, asJSON: asJSON, parse: func(s string) (ui.Exporter, error) { return ui.ParseTemplate(s) }},
		tplName, "format the JSON output with a Go `template` (implies --json; see docs/operations.md)")
}

// exportFlag is --jq or --template: compiled as it is parsed, so a bad
// expression is a usage error before anything runs.
type exportFlag struct {
	name string
	// chosen is the name of the filter flag given, shared by the
	// command's two: one filter at most.
	chosen *string
	asJSON *bool
	parse  func(string) (ui.Exporter, error)
	text   string
	e      ui.Exporter
}

func (x *exportFlag) String() string { return x.text }
func (x *exportFlag) Type() string   { return "string" }

func (x *exportFlag) Set(s string) error {
	if *x.chosen != "" && *x.chosen != x.name {
		return fmt.Errorf("--%s and --%s cannot be used together", *x.chosen, x.name)
	}
	e, err := x.parse(s)
	if err != nil {
		return err
	}
	*x.chosen, x.text, x.e, *x.asJSON = x.name, s, e, true
	return nil
}

// setExporter points f.IO.JSON at the --jq or --template the command was
// given, if any (the root's PersistentPreRun calls it for every command).
func setExporter(f *Factory, cmd *cobra.Command) {
	for _, name := range []string{"jq", "template", "go-template"} {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		if x, ok := fl.Value.(*exportFlag); ok {
			if t, ok := x.e.(*ui.Template); ok {
				t.SetClock(f.Now)
			}
			f.IO.SetExporter(x.e)
		}
	}
}
