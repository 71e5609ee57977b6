package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
)

// Exit codes. Every command maps its error here and nowhere else;
// docs/operations.md#exit-codes documents the table.
const (
	ExitOK          = 0   // done
	ExitError       = 1   // an error; the message says what and where
	ExitUsage       = 2   // bad command line
	ExitCapped      = 3   // --stop-when-capped: every account reached its daily cap
	ExitPaused      = 4   // the campaign is paused (a template or campaign-fatal error, too many failures, or campaign pause)
	ExitNoAccount   = 5   // every account failed for the campaign (token, permission, registration)
	ExitOutage      = 6   // the Cloud API answered no account for --outage-timeout; the campaign is paused
	ExitCancelled   = 7   // the campaign was cancelled (wasend campaign cancel); that is final
	ExitBudget      = 8   // --max-cost: the next message would pass the campaign's budget
	ExitInterrupted = 130 // Ctrl-C or SIGTERM; run the same command to continue
)

// usageError marks a bad command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode maps an error to the process's exit code and prints it.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command "), errors.Is(err, campaign.ErrBadName):
		fmt.Fprintf(stderr, "error: %v\nRun with --help for usage.\n", err)
		return ExitUsage
	case errors.Is(err, runner.ErrCapped):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitCapped
	case errors.Is(err, runner.ErrOutage):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitOutage
	case errors.Is(err, campaign.ErrNoUsableAccount):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitNoAccount
	case errors.Is(err, campaign.ErrBudget):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitBudget
	case errors.Is(err, campaign.ErrPaused):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitPaused
	case errors.Is(err, campaign.ErrCancelled):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return ExitCancelled
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return ExitError
}
