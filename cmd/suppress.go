package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/runner"
)

func newSuppressCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suppress",
		Short: "Manage the numbers that are never messaged",
		Long: `The suppression list holds numbers wasend never messages: people who opted out
or asked to stop, and numbers known to be bad. Every campaign import skips
them and reports them as "suppressed", with the reason when there is one.

Numbers are normalised to E.164 like recipient files: --region (default
$WASEND_REGION) gives the country of numbers written without +country code.

With --limits (or $WASEND_LIMITS) add, remove and import change the list
every host shares in Redis, and this database; list reads Redis. A sender
run with --limits copies the shared list into its database every second.`,
	}
	cmd.AddCommand(newSuppressAddCmd(f), newSuppressRemoveCmd(f), newSuppressListCmd(f), newSuppressImportCmd(f))
	return cmd
}

type suppressOptions struct {
	Numbers []string // add, remove
	File    string   // import
	Reason  string
	Region  string
	JSON    bool
}

func newSuppressAddCmd(f *Factory) *cobra.Command {
	var o suppressOptions
	cmd := &cobra.Command{
		Use:   "add NUMBER... [--reason R]",
		Short: "Never message these numbers",
		Long: `Add numbers to the suppression list. A number already listed keeps the date it
was first listed; --reason replaces its reason. Any invalid number stops the
command before anything is stored. With --limits (or $WASEND_LIMITS) the
numbers go to the list every host shares in Redis first, then here; Redis not
answering fails the command (exit 1) and changes nothing here.`,
		Example: `  wasend suppress add +4915123456789 --reason "replied STOP"
  wasend suppress add "0151 2345 6789" 0171-9876543 --region DE`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Numbers, o.Region = args, regionOf(cmd, f, o.Region)
			return suppressAdd(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why, e.g. \"replied STOP\" (shown when an import skips the number)")
	addRegionFlag(cmd, &o.Region)
	return cmd
}

func suppressAdd(ctx context.Context, f *Factory, o suppressOptions) error {
	phones, err := normalizeArgs(o.Numbers, o.Region)
	if err != nil {
		return err
	}
	list := make([]campaign.Suppression, len(phones))
	for i, p := range phones {
		list[i] = campaign.Suppression{Phone: p, Reason: o.Reason}
	}
	return f.withRecord(ctx, func(rec *hostshare.Record) error {
		added, err := suppressOnRecord(ctx, f, rec, list)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "added %d, already listed %d\n", added, len(list)-added)
		return nil
	})
}

// suppressOnRecord lists numbers on the record, and says so when that is
// the shared list.
func suppressOnRecord(ctx context.Context, f *Factory, rec *hostshare.Record, list []campaign.Suppression) (added int, err error) {
	added, err = rec.Suppress(ctx, list, f.Now())
	if err == nil && rec.Shared() {
		f.IO.Infof(sharedNote)
	}
	return added, err
}

func newSuppressRemoveCmd(f *Factory) *cobra.Command {
	var o suppressOptions
	cmd := &cobra.Command{
		Use:   "remove NUMBER...",
		Short: "Allow messages to these numbers again",
		Long: `Take numbers off the suppression list, for example after someone opted back
in. Later imports include them again; campaigns imported before are unchanged.
With --limits (or $WASEND_LIMITS) they come off the list every host shares in
Redis first, then here; Redis not answering fails the command (exit 1) and
changes nothing here.`,
		Example: `  wasend suppress remove +4915123456789
  wasend suppress remove "0151 2345 6789" --region DE`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Numbers, o.Region = args, regionOf(cmd, f, o.Region)
			return suppressRemove(cmd.Context(), f, o)
		},
	}
	addRegionFlag(cmd, &o.Region)
	return cmd
}

func suppressRemove(ctx context.Context, f *Factory, o suppressOptions) error {
	phones, err := normalizeArgs(o.Numbers, o.Region)
	if err != nil {
		return err
	}
	return f.withRecord(ctx, func(rec *hostshare.Record) error {
		removed, err := rec.Unsuppress(ctx, phones)
		if err != nil {
			return err
		}
		if rec.Shared() {
			f.IO.Infof(sharedNote)
		}
		fmt.Fprintf(f.IO.Out, "removed %d, not listed %d\n", removed, len(phones)-removed)
		return nil
	})
}

func newSuppressListCmd(f *Factory) *cobra.Command {
	var o suppressOptions
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the suppressed numbers",
		Long: `List the suppressed numbers in E.164 order with their reason and the time each
was first listed. Piped output is tab-separated without a header. With
--limits it lists the list shared by every host, from Redis.

A number that opted out by message has its reason (keyword "STOP", opt-out
button); one that sent an opt-in keyword (START) since it was listed says
so after its reason: an opt-in lifts nothing by itself, suppress remove does.`,
		Example: `  wasend suppress list
  wasend suppress list --json | jq -r '.[].phone'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return suppressList(cmd.Context(), f, o)
		},
	}
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

// suppressionJSON is the stable JSON shape of a listed number.
type suppressionJSON struct {
	Phone     string    `json:"phone"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
	// OptIn is the latest opt-in the number sent since it was listed.
	OptIn *optInJSON `json:"opt_in,omitempty"`
}

type optInJSON struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

func suppressList(ctx context.Context, f *Factory, o suppressOptions) error {
	loc, err := f.Location()
	if err != nil {
		return err
	}
	return f.withRecord(ctx, func(rec *hostshare.Record) error {
		list, err := rec.Suppressions(ctx)
		if err != nil {
			return err
		}
		optIns, err := rec.OptIns(ctx)
		if err != nil {
			return err
		}
		if o.JSON {
			out := make([]suppressionJSON, 0, len(list))
			for _, s := range list {
				j := suppressionJSON{Phone: s.Phone, Reason: s.Reason, CreatedAt: s.CreatedAt.In(loc)}
				if in, ok := optIns[s.Phone]; ok {
					j.OptIn = &optInJSON{Reason: in.Reason, At: in.At.In(loc)}
				}
				out = append(out, j)
			}
			return f.IO.JSON(out)
		}
		asked := 0
		t := newTable(f, "PHONE", "REASON", "LISTED").Truncate("REASON")
		for _, s := range list {
			reason := s.Reason
			if reason == "" {
				reason = "-"
			}
			if in, ok := optIns[s.Phone]; ok {
				asked++
				reason += fmt.Sprintf("; opt-in %s at %s", in.Reason, in.At.In(loc).Format("2006-01-02 15:04"))
			}
			t.Row(s.Phone, reason, s.CreatedAt.In(loc).Format("2006-01-02 15:04"))
		}
		if asked > 0 {
			f.IO.Infof("%d suppressed number(s) sent an opt-in since they were listed: it lifts nothing by itself; wasend suppress remove NUMBER does", asked)
		}
		if len(list) == 0 {
			f.IO.Infof("no suppressed numbers: add some with wasend suppress add and the numbers, or import a CSV file with wasend suppress import")
		}
		return t.Render()
	})
}

func newSuppressImportCmd(f *Factory) *cobra.Command {
	var o suppressOptions
	cmd := &cobra.Command{
		Use:   "import FILE.csv [--reason R]",
		Short: "Suppress every number in a CSV file",
		Long: `Add every number of a CSV file to the suppression list, in one transaction.
The file needs a header line with a phone column (phone, mobile, msisdn, wa_id,
… or number: see docs/recipients.md), like a recipient file; other columns are
ignored. Rows with an invalid number, and repeats of a number earlier in the
file, are reported with their line number and skipped. With --limits (or
$WASEND_LIMITS) the numbers go to the list every host shares in Redis first,
then here; Redis not answering fails the command (exit 1) and changes nothing
here.`,
		Example: `  wasend suppress import optouts.csv --reason "replied STOP"
  wasend suppress import bounced.csv --reason "not on WhatsApp" --region DE`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File, o.Region = args[0], regionOf(cmd, f, o.Region)
			return suppressImport(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why, for every number of the file")
	addRegionFlag(cmd, &o.Region)
	return cmd
}

func suppressImport(ctx context.Context, f *Factory, o suppressOptions) error {
	skipped := 0
	list, err := runner.ReadSuppressions(ctx, o.File, o.Region, o.Reason, func(k campaign.Skip) {
		skipped++
		f.IO.Infof("  line %d: %s: %s", k.Line, quoteInput(k.Input), k.Reason)
	})
	if errors.Is(err, runner.ErrUnknownRegion) {
		return badRegion(o.Region)
	}
	if err != nil {
		return err
	}
	return f.withRecord(ctx, func(rec *hostshare.Record) error {
		added, err := suppressOnRecord(ctx, f, rec, list)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "added %d, already listed %d, skipped %d\n", added, len(list)-added, skipped)
		return nil
	})
}

func addRegionFlag(cmd *cobra.Command, region *string) {
	cmd.Flags().StringVar(region, "region", "", "country (ISO code, e.g. DE) of numbers written without +country code (default $WASEND_REGION)")
}

// regionOf is --region if given, else $WASEND_REGION. It is read when the
// command runs, so tests can set the environment through the Factory.
func regionOf(cmd *cobra.Command, f *Factory, flag string) string {
	if cmd.Flags().Changed("region") {
		return flag
	}
	return f.Getenv("WASEND_REGION")
}

// normalizeArgs turns command-line numbers into E.164, without repeats, in
// the order given. Any invalid number is a usage error naming each one.
func normalizeArgs(args []string, region string) ([]string, error) {
	out, bad, err := runner.NormalizePhones(args, region)
	if errors.Is(err, runner.ErrUnknownRegion) {
		return nil, badRegion(region)
	}
	if len(bad) > 0 {
		return nil, usagef("invalid number %s; nothing changed", strings.Join(bad, "; "))
	}
	return out, nil
}

func badRegion(region string) error {
	return usagef("--region %q (or $WASEND_REGION): unknown region, want an ISO 3166 code such as DE", region)
}

// minArgs reports too few arguments as a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
