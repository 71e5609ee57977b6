package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// exitCodeHelp says what each exit code of exit.go means, in the order of
// the table; TestHelpTopicsName holds it to the constants.
var exitCodeHelp = []struct {
	code    int
	meaning string
}{
	{ExitOK, "done (a finished campaign may still have failed or unknown rows: see the summary), or done for now: the rows left were rescheduled by a webhook (131049) a day later, and the run says when to resume"},
	{ExitError, "an error; the message says what and where"},
	{ExitUsage, "bad command line"},
	{ExitCapped, "--stop-when-capped: every account reached its daily cap or its portfolio's messaging limit; the run says when the next quota day opens and how to continue"},
	{ExitPaused, "the campaign is paused (a template or campaign-fatal error, too many permanent failures, or wasend campaign pause)"},
	{ExitNoAccount, "every account failed for the campaign (token, permission, registration) and it is paused, or the preflight found no usable account and nothing was imported"},
	{ExitOutage, "the Cloud API answered no account for --outage-timeout (connection errors, 5xx); the campaign is paused, nothing failed"},
	{ExitCancelled, "the campaign was cancelled (wasend campaign cancel); that is final"},
	{ExitBudget, "--max-cost: the next message would take what was accepted and what is in flight past the campaign's budget; the run says how far it got, and a run with a raised --max-cost continues"},
	{ExitInterrupted, "interrupted (Ctrl-C, SIGTERM); run the same command to continue"},
}

// environmentHelp names every environment variable wasend reads;
// TestHelpTopicsName holds it to the variables the code reads.
var environmentHelp = []struct{ name, meaning string }{
	{"WASEND_DB", "database file; --db wins. Default $XDG_DATA_HOME/wasend/wasend.db, created (mode 0600) only by the commands that set wasend up"},
	{"WASEND_TZ", "IANA time zone times are shown in (default: local, from TZ); on a new database also the zone of quota days, which is then fixed"},
	{"WASEND_LIMITS", "share the limits with other hosts through Redis: redis://[user:pass@]host:6379/0, or rediss:// for TLS; --limits wins. Shown only with its password redacted"},
	{"WASEND_HOST", "the name this host's runs are known by (default: the hostname); hosts on one database need distinct ones, and another host's run counts as dead only when its heartbeat is 30 s old"},
	{"WASEND_REGION", "default country (ISO code, e.g. DE) of numbers written without +country code; --region wins"},
	{"WASEND_TOKEN", "the access token of an account added without --token-env; each account names its own variable with account add --token-env"},
	{"WASEND_SANDBOX_TOKEN", "the token variable of the sandbox's demo accounts; the sandbox takes any token, so it need not be set"},
	{"WASEND_APP_SECRET", "the Meta app's secret: checks each webhook's X-Hub-Signature-256 (and signs the sandbox's)"},
	{"WASEND_VERIFY_TOKEN", "the verify token entered with the webhook's callback URL"},
	{"WASEND_API_BASE", "Cloud API base URL (default https://graph.facebook.com)"},
	{"WASEND_API_VERSION", "Graph API version (default " + defaultAPIVersionHelp + ")"},
	{"WASEND_CPUPROFILE", "write a CPU profile of the whole process to this file (for measuring a run)"},
	{"WASEND_TRACE_SLOW", "a duration such as 20ms: write a line to stderr for every write transaction, webhook group commit and checkpoint that took as long or longer, with what it waited on (for finding stalls)"},
	{"SOURCE_DATE_EPOCH", "the date (Unix seconds) wasend gen man puts on the man pages, for reproducible builds (default today)"},
	{"XDG_DATA_HOME", "where the default database lives (default ~/.local/share)"},
	{"HOME", "home directory, for the default of XDG_DATA_HOME"},
	{"TZ", "the local time zone, the default of WASEND_TZ"},
	{"COLUMNS", "terminal width for tables, progress and help when it cannot be asked"},
	{"GOGC", "with GOMEMLIMIT: when either is set, campaign run leaves Go's garbage collector as they say"},
	{"GOMEMLIMIT", "see GOGC"},
}

// defaultAPIVersionHelp is whatsapp.DefaultVersion, the Graph API version
// used when WASEND_API_VERSION is unset (cmd reaches the client only
// through runner); TestHelpTopicsName holds the two equal.
const defaultAPIVersionHelp = "v26.0"

// newHelpTopics builds `wasend help exit-codes` and `wasend help
// environment`: commands without a Run, which cobra lists as help topics.
func newHelpTopics() []*cobra.Command {
	var codes strings.Builder
	codes.WriteString("wasend's exit codes (every command maps its error to one of them):\n\n")
	for _, c := range exitCodeHelp {
		codes.WriteString(wrapWords(fmt.Sprintf("  %-5d", c.code), c.meaning, 80, 7) + "\n")
	}
	var env strings.Builder
	env.WriteString("Environment variables wasend reads. Tokens and the app secret are read from\nthe environment only; they are never written to the database, a log line, an\nerror message or JSON output.\n\n")
	for _, v := range environmentHelp {
		env.WriteString("  " + v.name + "\n" + wrapWords("      ", v.meaning, 80, 6) + "\n")
	}
	return []*cobra.Command{
		{Use: "exit-codes", Short: "What wasend's exit codes mean", Long: strings.TrimRight(codes.String(), "\n")},
		{Use: "environment", Short: "The environment variables wasend reads", Long: strings.TrimRight(env.String(), "\n")},
	}
}
