package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

// fromOptions are the retargeting flags of run, check and plan: the
// recipients are another campaign's rows in a segment, not a file.
type fromOptions struct {
	From    int64
	Segment string
}

func addFromFlags(fl *pflag.FlagSet, o *fromOptions) {
	fl.Int64Var(&o.From, "from", 0, "take the recipients from campaign `ID`'s rows in --segment instead of a file (retargeting)")
	fl.StringVar(&o.Segment, "segment", "", "with --from: not-delivered, delivered-not-read, read, replied, not-replied or failed:CODE")
}

// segment checks the retargeting flags: ok is false without --from.
func (o fromOptions) segment() (seg campaign.Segment, ok bool, err error) {
	switch {
	case o.From == 0 && o.Segment == "":
		return seg, false, nil
	case o.From == 0:
		return seg, false, usagef("--segment %s needs --from ID, the campaign whose rows it selects", o.Segment)
	case o.From < 0:
		return seg, false, usagef("--from %d: a campaign ID is positive", o.From)
	case o.Segment == "":
		return seg, false, usagef("--from %d needs --segment: %s", o.From, campaign.Segments)
	}
	seg, err = campaign.ParseSegment(o.Segment)
	if err != nil {
		return seg, false, usageError{err}
	}
	return seg, true, nil
}

// fileOrFrom takes FILE.csv, or no argument with --from.
func fileOrFrom(o *fromOptions) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if o.From != 0 {
			if len(args) > 0 {
				return usagef("%q is not expected with --from %d: the recipients are that campaign's rows in --segment", args[0], o.From)
			}
			return nil
		}
		return exactArgs(1)(cmd, args)
	}
}

// checkSource reads FILE.csv, or the --from segment, as check and plan
// do; name stands for it in what is printed.
func checkSource(ctx context.Context, f *Factory, st driver.Driver, o runOptions, spec campaign.Spec, ro runner.ReadOptions,
	keep int) (sum runner.Summary, name string, err error) {
	seg, from, err := o.segment()
	if err != nil {
		return sum, "", err
	}
	if !from {
		file, err := runner.OpenFile(o.File)
		if err != nil {
			return sum, "", err
		}
		defer file.Close()
		sum, err = checkFile(ctx, f, st, file, o.File, spec, ro, o.Report, keep)
		return sum, o.File, err
	}
	sf, err := runner.OpenSegment(ctx, st, o.From, seg)
	if err != nil {
		return sum, "", err
	}
	sum, err = checkFile(ctx, f, st, sf.Reader(), sf.Name, spec, sf.ReadOptions(ro), o.Report, keep)
	return sum, sf.Name, sf.ColumnError(err)
}
