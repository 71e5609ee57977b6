package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/hint"
)

// withQuoteHint adds a hint to err, an argument count error: a word left
// over after n positional arguments most often is the rest of a flag
// value with a space that was not quoted (--params First Name), so the
// hint shows that value quoted. Cobra does not say which flag the word
// followed: the example takes a list flag of the command's own given (column lists are where
// CSV headers with spaces go), else the one value flag given, else
// names none.
func withQuoteHint(cmd *cobra.Command, args []string, n int, err error) error {
	if len(args) <= n {
		return err
	}
	extra := strings.Join(args[n:], " ")
	var list, single *pflag.Flag
	values := 0
	cmd.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed || fl.Value.Type() == "bool" {
			return
		}
		values++
		if _, ok := fl.Value.(pflag.SliceValue); ok && list == nil {
			list = fl
		}
		single = fl
	})
	fl := list
	if fl == nil && values == 1 {
		fl = single
	}
	if fl == nil {
		return fmt.Errorf("%w: if %q is part of a flag's value, quote the whole value", err, extra)
	}
	v := fl.Value.String()
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		if s := sv.GetSlice(); len(s) > 0 {
			v = s[len(s)-1]
		}
	}
	return fmt.Errorf("%w: if %q is part of --%s's value, quote the whole value: --%s %s", err, extra, fl.Name, fl.Name, hint.Quote(v+" "+extra))
}
