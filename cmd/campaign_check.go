package cmd

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
)

// addReadFlags adds the flags that say how to read the recipient file,
// shared by run, check and preview.
func addReadFlags(fl *pflag.FlagSet, o *runOptions) {
	fl.StringVar(&o.Region, "region", "", "country (ISO code, e.g. DE) of numbers written without +country code (default $WASEND_REGION)")
	fl.StringVar(&o.Delimiter, "delimiter", "", "field delimiter: , ; or tab (default: detected from the header)")
	fl.StringVar(&o.PhoneColumn, "phone-column", "", "column holding the numbers (default: phone, mobile, msisdn, wa_id or number)")
	fl.StringVar(&o.Report, "report", "", "write every skipped row, with its line and reason, to this CSV file")
	fl.DurationVar(&o.SkipContactedWithin, "skip-contacted-within", 0, "skip numbers any campaign sent to within this long, e.g. 72h")
}

// readOptions checks the reading flags.
func (o runOptions) readOptions(f *Factory) (runner.ReadOptions, error) {
	ro := runner.ReadOptions{Region: o.Region, PhoneColumn: o.PhoneColumn, SkipContactedWithin: o.SkipContactedWithin}
	if o.SkipContactedWithin < 0 {
		return ro, usagef("--skip-contacted-within %v: must not be negative", o.SkipContactedWithin)
	}
	if ro.Region == "" {
		ro.Region = f.Getenv("WASEND_REGION")
	}
	switch o.Delimiter {
	case "":
	case ",", ";":
		ro.Delimiter = rune(o.Delimiter[0])
	case "tab", `\t`, "\t":
		ro.Delimiter = '\t'
	default:
		return ro, usagef("--delimiter %q: must be , ; or tab", o.Delimiter)
	}
	return ro, nil
}

func newCampaignCheckCmd(f *Factory) *cobra.Command {
	var (
		o      runOptions
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "check FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT)",
		Short: "Validate a recipient file without storing or sending anything",
		Long: `Read FILE.csv exactly as ` + "`campaign run`" + ` would — phone numbers normalised,
parameters checked, duplicates and suppressed numbers found — and print what
it found: rows read, valid recipients, unusable rows by reason, duplicates,
suppressed numbers, and the first problems with their line numbers. Nothing is
stored and nothing is sent. --report writes every skipped row to a CSV file.
A whole-file problem (no phone column, a missing --params column, broken
quoting) is an error that names the file, line and column.`,
		Example: `  wasend campaign check promo.csv --template spring_sale --lang en_US --params name,code
  wasend campaign check promo.csv --text "Hi {{name}}" --region DE --report skipped.csv`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			spec, err := o.spec(f.Sandbox)
			if err != nil {
				return err
			}
			ro, err := o.readOptions(f)
			if err != nil {
				return err
			}
			file, err := recipients.OpenFile("recipient", args[0])
			if err != nil {
				return err
			}
			defer file.Close()
			return f.withStore(ctx, func(st *store.Store) error {
				// An empty suppression list needs no lookup per row.
				var suppressed runner.SuppressedFunc
				if n, err := st.CountSuppressions(ctx); err != nil {
					return err
				} else if n > 0 {
					suppressed = st.IsSuppressed
				}
				if ro.SkipContactedWithin > 0 {
					if ro.Contacted, err = st.ContactedWithin(ctx, ro.SkipContactedWithin); err != nil {
						return err
					}
				}
				sum, err := runner.Check(ctx, file, args[0], spec, ro, suppressed)
				if err != nil {
					return err
				}
				if o.Report != "" {
					if err := runner.WriteReport(o.Report, sum.Skipped); err != nil {
						return err
					}
					f.IO.Infof("wrote %d skipped row(s) to %s", len(sum.Skipped), o.Report)
				}
				if asJSON {
					return f.IO.JSON(summaryJSON(sum))
				}
				return printCheck(f, args[0], sum)
			})
		},
	}
	fl := cmd.Flags()
	addMessageFlags(fl, &o)
	addReadFlags(fl, &o)
	acceptSendFlags(f, cmd)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

type checkJSON struct {
	Rows       int            `json:"rows"`
	Valid      int            `json:"valid"`
	Invalid    map[string]int `json:"invalid"`
	Duplicates int            `json:"duplicates"`
	Suppressed int            `json:"suppressed"`
	Problems   []problemJSON  `json:"problems"`
}

type problemJSON struct {
	Line   int    `json:"line"`
	Input  string `json:"input"`
	Reason string `json:"reason"`
}

func summaryJSON(s runner.Summary) checkJSON {
	out := checkJSON{Rows: s.Rows, Valid: s.Valid, Invalid: map[string]int{}, Duplicates: s.Duplicates,
		Suppressed: s.Suppressed, Problems: []problemJSON{}}
	for _, r := range s.Invalid {
		out.Invalid[r.Reason] = r.Rows
	}
	for _, k := range s.Skipped {
		out.Problems = append(out.Problems, problemJSON{k.Line, k.Input, k.Reason})
	}
	return out
}

// firstProblems is how many skipped rows check lists; --report has all.
const firstProblems = 10

func printCheck(f *Factory, file string, s runner.Summary) error {
	w := f.IO.Out
	fmt.Fprintf(w, "%s: %d rows read, %d valid, %d invalid, %d duplicates, %d suppressed\n",
		file, s.Rows, s.Valid, s.Rows-s.Valid-s.Duplicates-s.Suppressed, s.Duplicates, s.Suppressed)
	for _, r := range s.Invalid {
		fmt.Fprintf(w, "  %6d  %s\n", r.Rows, r.Reason)
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintln(w, "first problems:")
	}
	for i, k := range s.Skipped {
		if i == firstProblems {
			fmt.Fprintf(w, "  … and %d more (--report FILE.csv lists them all)\n", len(s.Skipped)-firstProblems)
			break
		}
		fmt.Fprintf(w, "  line %d: %s: %s\n", k.Line, strconv.Quote(k.Input), k.Reason)
	}
	return nil
}
