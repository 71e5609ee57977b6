package cmd

import "github.com/spf13/cobra"

// addJSONFlag gives cmd the --json flag every command with machine-readable
// output has, in one wording; the command prints with f.IO.JSON when it is
// set. (gh's pkg/cmdutil/json_flags.go is the model.)
func addJSONFlag(cmd *cobra.Command, asJSON *bool) {
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}
