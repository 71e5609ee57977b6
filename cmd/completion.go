package cmd

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

// addCompletions teaches shell completion the names wasend knows, by one
// rule over the whole tree, so commands added later get it too: an ID
// argument completes campaign ids, a NAME argument under account (or tier)
// account (or tier) names; --resume campaign ids; --tier tiers; --account
// and --accounts account names; --template the templates campaigns used.
func addCompletions(f *Factory, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		arg, _, _ := strings.Cut(strings.TrimPrefix(c.Use, c.Name()), "[")
		switch fields := strings.Fields(arg); {
		case c.ValidArgsFunction != nil || len(fields) == 0:
		case fields[0] == "ID":
			c.ValidArgsFunction = firstArg(f, campaignIDs(f))
		case fields[0] == "NAME" && c.Parent() != nil && c.Parent().Name() == "account":
			c.ValidArgsFunction = firstArg(f, accountNames)
		case fields[0] == "NAME" && c.Parent() != nil && c.Parent().Name() == "tier":
			c.ValidArgsFunction = firstArg(f, tierNames)
		}
		for flag, list := range map[string]func(context.Context, driver.Driver) ([]string, error){
			"resume": campaignIDs(f), "tier": tierNames, "account": accountNames, "accounts": accountNames, "template": templateNames,
		} {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return names(cmd, f, list)
				})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func firstArg(f *Factory, list func(context.Context, driver.Driver) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, f, list)
	}
}

// names reads a list from the database for completion. It never creates
// the database, and a failure completes nothing rather than print an
// error into the user's shell.
func names(cmd *cobra.Command, f *Factory, list func(context.Context, driver.Driver) ([]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	path, err := f.DatabasePath()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if _, err := os.Stat(path); err != nil && !runner.IsPostgres(path) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	err = f.withStore(cmd.Context(), func(st driver.Driver) (err error) {
		out, err = list(cmd.Context(), st)
		return err
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// campaignIDs describes each campaign with its true state, as list and
// show say it (a campaign no process sends is not "running").
func campaignIDs(f *Factory) func(context.Context, driver.Driver) ([]string, error) {
	return func(ctx context.Context, st driver.Driver) ([]string, error) {
		camps, err := readmodel.New(st).Campaigns(ctx)
		if err != nil {
			return nil, err
		}
		rep := f.reporter(st)
		out := make([]string, 0, len(camps))
		for _, c := range camps {
			state, err := rep.StateOf(ctx, c)
			if err != nil {
				return nil, err
			}
			out = append(out, cobra.CompletionWithDesc(strconv.FormatInt(c.ID, 10), c.Name+" ("+state+")"))
		}
		return out, nil
	}
}

func accountNames(ctx context.Context, st driver.Driver) ([]string, error) {
	accts, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(accts))
	for _, a := range accts {
		out = append(out, cobra.CompletionWithDesc(a.Name, a.Tier))
	}
	return out, nil
}

func tierNames(ctx context.Context, st driver.Driver) ([]string, error) {
	tiers, err := readmodel.New(st).Tiers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(tiers))
	for _, t := range tiers {
		out = append(out, cobra.CompletionWithDesc(t.Name, formatRate(t.Limits.Rate)+", cap "+strconv.Itoa(t.Limits.DailyCap)))
	}
	return out, nil
}

// templateNames are the templates earlier campaigns sent: the Cloud API
// lists a business's templates only with a token this completion does not
// have.
func templateNames(ctx context.Context, st driver.Driver) ([]string, error) {
	camps, err := readmodel.New(st).Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range camps {
		if t := c.Spec.Template; t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}
