package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

// addReadFlags adds the flags that say how to read the recipient file,
// shared by run, check and preview.
func addReadFlags(fl *pflag.FlagSet, o *runOptions) {
	fl.StringVar(&o.Region, "region", "", "country (ISO code, e.g. DE) of numbers written without +country code (default $WASEND_REGION)")
	fl.StringVar(&o.Delimiter, "delimiter", "", "field delimiter: , ; or tab (default: detected from the header)")
	fl.StringVar(&o.PhoneColumn, "phone-column", "", "column holding the numbers (default: picked by its name, a WhatsApp or mobile one first)")
	fl.StringVar(&o.UserIDColumn, "user-id-column", "", "column holding business-scoped user ids, sent to when a row has no phone (default: user_id, bsuid or wa_user_id)")
	fl.StringVar(&o.Report, "report", "", "write every skipped row, with its line and reason, to this CSV file")
	fl.DurationVar(&o.SkipContactedWithin, "skip-contacted-within", 0, "skip numbers any campaign sent to within this long, e.g. 72h")
	fl.StringVar(&o.Shard, "shard", "", "take only shard `K/N` of the list (numbers split by a hash): N hosts given the same file, each its own K, cover it once")
	fl.BoolVar(&o.Again, "again", false, "send even to numbers that got the same template in the last 24 h, and as a new campaign even when one with this message and these recipients exists")
}

// preview checks the flags that `campaign check` and `campaign plan` read a
// list by, as `campaign run` would: the message, the API, the reading flags.
func (o runOptions) preview(f *Factory) (campaign.Spec, campaign.API, runner.ReadOptions, error) {
	spec, err := o.spec(f.Sandbox)
	if err != nil {
		return spec, "", runner.ReadOptions{}, err
	}
	sendAPI, err := parseSendAPI(o.API)
	if err != nil {
		return spec, "", runner.ReadOptions{}, usageError{err}
	}
	ro, err := o.readOptions(f)
	return spec, sendAPI, ro, err
}

// readOptions checks the reading flags.
func (o runOptions) readOptions(f *Factory) (runner.ReadOptions, error) {
	ro := runner.ReadOptions{Region: o.Region, PhoneColumn: o.PhoneColumn, UserIDColumn: o.UserIDColumn, SkipContactedWithin: o.SkipContactedWithin, Again: o.Again,
		IgnoreWindow: o.IgnoreWindow, Now: f.Now()}
	if o.IgnoreWindow && o.Text == "" {
		return ro, usagef("--ignore-window applies to --text messages only: templates may be sent outside the customer service window")
	}
	if o.SkipContactedWithin < 0 {
		return ro, usagef("--skip-contacted-within %v: must not be negative", o.SkipContactedWithin)
	}
	if o.Shard != "" {
		sh, err := runner.ParseShard(o.Shard)
		if err != nil {
			return ro, usagef("--shard: %v", err)
		}
		ro.Shard = sh
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

// checkOptions are campaign check's flags: run's reading and message
// flags, and --json.
type checkOptions struct {
	runOptions
	JSON bool
}

func newCampaignCheckCmd(f *Factory) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check FILE.csv (--template NAME --lang CODE [--params COL,…] | --text TEXT)",
		Short: "Validate a recipient file without storing or sending anything",
		Long: `Read FILE.csv exactly as ` + "`campaign run`" + ` would — phone numbers normalised,
parameters checked, duplicates and suppressed numbers found — and print what
it found: rows read, valid recipients, unusable rows by reason, duplicates,
suppressed numbers, and the first problems with their line numbers. Nothing is
stored and nothing is sent. --report writes every skipped row to a CSV file.
It names the column the numbers are read from and any other phone-like one
(--phone-column picks another). A whole-file problem (no phone column, a
missing --params column, broken quoting) is an error that names the file,
line and column.`,
		Example: `  wasend campaign check promo.csv --template spring_sale --lang en_US \
      --params name,code
  wasend campaign check promo.csv --text "Hi {{name}}" --region DE \
      --report skipped.csv`,
		Args: fileOrFrom(&o.fromOptions),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			return campaignCheck(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	addMessageFlags(fl, &o.runOptions)
	addReadFlags(fl, &o.runOptions)
	addFromFlags(fl, &o.fromOptions)
	addScheduleFlags(fl, &o.scheduleOptions)
	addAPIFlag(fl, &o.runOptions)
	acceptSendFlags(f, cmd)
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

func campaignCheck(ctx context.Context, f *Factory, o checkOptions) error {
	spec, sendAPI, ro, err := o.preview(f)
	if err != nil {
		return err
	}
	// With --send-window, rows without a usable time zone are found here
	// as the import would skip them.
	if ro.Schedule, err = o.schedule(f); err != nil {
		return err
	}
	if _, _, err := o.segment(); err != nil {
		return err
	}
	if o.From == 0 {
		// A missing file is said before the database is opened.
		file, err := runner.OpenFile(o.File)
		if err != nil {
			return err
		}
		file.Close()
	}
	return f.withStore(ctx, func(st driver.Driver) error {
		if err := runner.CheckTemplate(ctx, st, f.IO, spec); err != nil {
			return err
		}
		if _, err := runner.Endpoint(ctx, st, sendAPI, spec); err != nil {
			return err
		}
		if err := runner.CheckTTL(ctx, st, sendAPI, spec, o.TTL); err != nil {
			return err
		}
		keep := firstProblems // --json lists every problem
		if o.JSON {
			keep = -1
		}
		sum, name, err := checkSource(ctx, f, st, o.runOptions, spec, ro, keep)
		if err != nil {
			return err
		}
		est := runner.FileEstimate(ctx, st, sum, spec, checkDate(f, ro))
		if o.JSON {
			return f.IO.JSON(struct {
				checkJSON
				Cost *report.CostDetail `json:"cost,omitempty"`
			}{summaryJSON(sum), est})
		}
		if err := printCheck(f, name, sum); err != nil {
			return err
		}
		printFileEstimate(f.IO.Out, est)
		return nil
	})
}

type checkJSON struct {
	phoneJSON
	Rows       int            `json:"rows"`
	Valid      int            `json:"valid"`
	Invalid    map[string]int `json:"invalid"`
	Duplicates int            `json:"duplicates"`
	Suppressed int            `json:"suppressed"`
	Contacted  int            `json:"contacted"`
	NoWindow   int            `json:"no_window"`    // --text: numbers without an open customer service window
	Elsewhere  int            `json:"other_shards"` // rows --shard leaves to other hosts
	Problems   []problemJSON  `json:"problems"`
}

type problemJSON struct {
	Line   int    `json:"line"`
	Input  string `json:"input"`
	Reason string `json:"reason"`
}

// phoneJSON is the column the numbers were read from, and the other
// phone-like ones, in the --json of check and plan.
type phoneJSON struct {
	PhoneColumn string   `json:"phone_column"`
	PhoneUnused []string `json:"phone_columns_unused"`
	UserIDs     string   `json:"user_id_column,omitempty"` // business-scoped user ids, when the file has them
}

func phoneOf(s runner.Summary) phoneJSON {
	return phoneJSON{PhoneColumn: s.Phone.Name, PhoneUnused: append([]string{}, s.Phone.Unused...), UserIDs: s.Phone.UserIDs}
}

// printPhoneColumn is the line check and plan print after their first
// (which scripts read); preview says it on stderr, run in its import
// summary.
func printPhoneColumn(w io.Writer, s runner.Summary) {
	fmt.Fprintf(w, "phone column: %s\n", s.Phone)
}

func summaryJSON(s runner.Summary) checkJSON {
	out := checkJSON{phoneJSON: phoneOf(s), Rows: s.Rows, Valid: s.Valid, Invalid: map[string]int{}, Duplicates: s.Duplicates,
		Suppressed: s.Suppressed, Contacted: s.Contacted, NoWindow: s.NoWindow, Elsewhere: s.Elsewhere, Problems: []problemJSON{}}
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
	fmt.Fprintf(w, "%s: %d rows read, %d valid, %d invalid, %d duplicates, %d suppressed",
		file, s.Rows, s.Valid, s.Rows-s.Valid-s.Duplicates-s.Suppressed-s.Contacted-s.NoWindow, s.Duplicates, s.Suppressed)
	if s.Contacted > 0 {
		fmt.Fprintf(w, ", %d contacted recently", s.Contacted)
	}
	if s.NoWindow > 0 {
		fmt.Fprintf(w, ", %d without a customer service window", s.NoWindow)
	}
	if s.Elsewhere > 0 {
		fmt.Fprintf(w, "; %d rows are other shards'", s.Elsewhere)
	}
	fmt.Fprintln(w)
	for _, r := range s.Invalid {
		fmt.Fprintf(w, "  %6d  %s\n", r.Rows, r.Reason)
	}
	printPhoneColumn(w, s)
	if len(s.Skipped) > 0 {
		fmt.Fprintln(w, "first problems:")
	}
	for i, k := range s.Skipped {
		if i == firstProblems {
			break
		}
		fmt.Fprintf(w, "  line %d: %s: %s\n", k.Line, strconv.Quote(k.Input), k.Reason)
	}
	if skipped := s.Rows - s.Valid; skipped > firstProblems {
		fmt.Fprintf(w, "  … and %d more (--report FILE.csv lists them all)\n", skipped-firstProblems)
	}
	return nil
}

// checkFile reads a recipient file as an import would (runner.CheckEach),
// keeping the first keep skipped rows (all when keep < 0) and streaming
// every one to the report at path, when given.
func checkFile(ctx context.Context, f *Factory, st driver.Driver, file io.Reader, name string, spec campaign.Spec,
	ro runner.ReadOptions, report string, keep int) (runner.Summary, error) {
	if report == "" {
		return runner.CheckEach(ctx, file, name, spec, ro, runner.Lists(st), keep, nil)
	}
	rep, err := runner.NewReport(report)
	if err != nil {
		return runner.Summary{}, err
	}
	sum, err := runner.CheckEach(ctx, file, name, spec, ro, runner.Lists(st), keep, rep.Add)
	if err != nil {
		rep.Abort()
		return sum, err
	}
	if err := rep.Commit(); err != nil {
		return sum, err
	}
	f.IO.Infof("wrote %d skipped row(s) to %s", rep.Rows(), report)
	return sum, nil
}

// checkDate is the day check prices a file at: its --at, or today.
func checkDate(f *Factory, ro runner.ReadOptions) time.Time {
	if !ro.Schedule.StartAt.IsZero() {
		return ro.Schedule.StartAt
	}
	return f.Now()
}
