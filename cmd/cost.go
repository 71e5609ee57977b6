package cmd

import (
	"github.com/spf13/cobra"
)

func newCostCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "cost ID", Short: "Print a campaign's estimated and actual cost", Args: exactArgs(1), Hidden: true}
}
