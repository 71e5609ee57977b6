// Package cmd is wasend's command line: Cobra commands that parse flags,
// call into internal packages and print. Nothing else lives here.
package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
)

// version and commit are set at build time by the release (.goreleaser.yaml):
// -ldflags "-X github.com/wasend/wasend/cmd.version=v1.2.3 -X github.com/wasend/wasend/cmd.commit=…".
var version, commit = "", ""

// Version returns the build's version: the release's, else the module's
// (go install …@v1.2.3, or the version Go derives from the VCS), else dev.
func Version() string {
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(version, bi)
}

func buildVersion(version string, bi *debug.BuildInfo) string {
	if version != "" {
		return version
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what wasend version and wasend --version print after
// "wasend ": the version, then the commit it was built from and that
// commit's time ("+dirty" when the work tree had changes), as the release's
// ldflags or Go's VCS stamp recorded them.
func versionLine(version, commit string, bi *debug.BuildInfo) string {
	v := buildVersion(version, bi)
	var at string
	dirty := false
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if commit == "" {
		return v + " (commit unknown: built without VCS information)"
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if dirty {
		commit += "+dirty"
	}
	if at != "" {
		return fmt.Sprintf("%s (commit %s, %s)", v, commit, at)
	}
	return fmt.Sprintf("%s (commit %s)", v, commit)
}

func buildVersionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return versionLine(version, commit, bi)
}

// Main runs wasend and returns the process exit code.
func Main() int {
	f := newFactory()
	defer startProfile(f.IO.ErrOut)()
	ctx, stop := interruptContext(f)
	defer stop()
	root := NewRootCmd(f)
	err := root.ExecuteContext(ctx)
	return exitCode(err, f.IO.ErrOut)
}

// interruptContext is cancelled by the first SIGINT or SIGTERM, so commands
// stop taking work and finish what is in flight; a second one exits at once.
func interruptContext(f *Factory) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sig:
		case <-ctx.Done():
			return
		}
		// Only a command that sends has requests in flight to talk about;
		// any other (status --watch, sandbox serve) just ends.
		sends := f.sends.Load() && !f.IO.Quiet
		if sends {
			fmt.Fprintln(f.IO.ErrOut, "\ninterrupted: finishing requests in flight (press Ctrl-C again to quit at once)")
		}
		cancel()
		<-sig
		if sends {
			fmt.Fprintln(f.IO.ErrOut, "quit: rows in flight will be marked unknown on the next run")
		}
		os.Exit(ExitInterrupted)
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "wasend",
		Short: "Bulk-send WhatsApp messages through the Cloud API, within every limit",
		Long: `wasend sends a WhatsApp template (or text) message to every recipient of a CSV
file through Meta's WhatsApp Cloud API, across several business numbers, each
paced by its tier's token bucket and daily cap. Every recipient's state is kept
in SQLite, so an interrupted run continues where it stopped without sending
anyone a message twice.

Try it without credentials:
  wasend campaign run --sandbox testdata/recipients.csv`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersionLine(),
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			if q, _ := cmd.Flags().GetBool("quiet"); q {
				f.IO.Quiet = true
				// The log's warnings are warnings too; an explicit
				// --log-level still wins.
				if !cmd.Flags().Changed("log-level") {
					f.LogLevel = "error"
				}
			}
			f.sends.Store(cmd.Annotations[annotationSends] != "")
			f.setsUp = setsUp[cmd.CommandPath()]
			setExporter(f, cmd)
			warnAPIVersion(f)
		},
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	setHelp(root, f.IO)
	root.SetVersionTemplate("wasend {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&f.DBPath, "db", "", "database file or postgres:// URL (default $WASEND_DB, else $XDG_DATA_HOME/wasend/wasend.db)")
	pf.BoolVar(&f.Sandbox, "sandbox", false, "use the sandbox database; campaign run also sends to the built-in Cloud API stand-in")
	pf.BoolP("quiet", "q", false, "print only results and errors: no progress, notes, warnings, hints or log below error (the exit code says how it ended)")
	pf.StringVar(&f.LogFormat, "log-format", "text", "log format on stderr: text or json")
	pf.StringVar(&f.LogLevel, "log-level", "warn", "log level: debug (every send), info (state changes), warn, error")
	pf.StringVar(&f.Limits, "limits", "", "share limits between hosts through Redis: redis://[user:pass@]host:6379/0 or rediss:// (default $WASEND_LIMITS)")

	// A group (account, tier, …) run without a known subcommand: help for
	// no arguments, a usage error for an unknown one.
	defer func() {
		for _, c := range root.Commands() {
			if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
				c.Args = func(cmd *cobra.Command, args []string) error {
					if len(args) > 0 {
						return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
					}
					return nil
				}
				c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
			}
		}
	}()
	root.AddCommand(
		newAccountCmd(f),
		newPortfolioCmd(f),
		newTemplateCmd(f),
		newTierCmd(f),
		newLimitCmd(f),
		newQuotaCmd(f),
		newConfigCmd(f),
		newCampaignCmd(f),
		newStatusCmd(f),
		newReportCmd(f),
		newTopCmd(f),
		newDoctorCmd(f),
		newSuppressCmd(f),
		newWebhookCmd(f),
		newPricingCmd(f),
		newCostCmd(f),
		newStoreCmd(f),
		newSandboxCmd(f),
		newVersionCmd(),
		newGenCmd(f),
	)
	root.AddCommand(newHelpTopics()...)
	// Made now rather than at Execute, so that the loop above treats it as
	// a group: `completion powershellz` is a usage error, not help.
	root.InitDefaultCompletionCmd()
	addCompletions(f, root)
	return root
}

// annotationSends marks a command that sends messages: Ctrl-C talks about
// the requests in flight only there.
const annotationSends = "wasend/sends"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print wasend's version",
		Long:    "Print the version wasend was built as and the commit it was built from\n(the same as wasend --version).",
		Example: `  wasend version`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "wasend %s\n", buildVersionLine())
			return err
		},
	}
}

// noArgs and exactArgs report wrong arguments as usage errors.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{withQuoteHint(cmd, args, n, err)}
		}
		return nil
	}
}

// maxArgs is cobra.MaximumNArgs(n) with its error a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MaximumNArgs(n)(cmd, args); err != nil {
			return usageError{withQuoteHint(cmd, args, n, err)}
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{withQuoteHint(cmd, args, 0, err)}
	}
	return nil
}

// warnAPIVersion says once, on stderr, that WASEND_API_VERSION has ended or
// ends within 90 days: Meta then answers as another version.
func warnAPIVersion(f *Factory) {
	if w := runner.APIVersionWarning(f.Getenv("WASEND_API_VERSION"), f.Now()); w != "" {
		f.IO.Warnf("%s", w)
	}
}
