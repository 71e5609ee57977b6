package cmd

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/sandbox"
)

// sandboxServeOptions are the flags of "sandbox serve".
type sandboxServeOptions struct {
	Addr          string
	RecordFile    string
	FailNumbers   []string
	FatalAccounts []string
	CodeProbs     []string
	Numbers       []string
	Latency       string
	Opts          sandbox.Options
}

func newSandboxCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a local stand-in for the WhatsApp Cloud API",
		Long: `Run a local stand-in for the WhatsApp Cloud API send endpoint.

It answers like Meta's API, enforces the per-number throughput and the
pair rate limit, and injects faults on request. Nothing leaves this machine.`,
	}
	cmd.AddCommand(newSandboxServeCmd(f))
	return cmd
}

func newSandboxServeCmd(fac *Factory) *cobra.Command {
	o := &sandboxServeOptions{}
	f := &o.Opts.Faults
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the sandbox API until interrupted",
		Long: `Serve the local stand-in for the WhatsApp Cloud API on --addr until Ctrl-C,
for wasend (WASEND_API_BASE=http://ADDR) or any other client. It answers with
the real response and error shapes, enforces 80 messages/s per number and
the 6 s pair limit, and injects faults on demand: probabilities of throttling,
server errors, dropped connections, slow answers and any Graph error code;
numbers that always fail; accounts that turn fatal after N messages; bad
templates; Retry-After hints; phone number ids that do not exist; an answer
delay (--latency). --record writes one JSON line per request, the record the
reliability tests judge from. Nothing leaves the machine.

--webhook URL posts status webhooks for every accepted message (dropped
answers included) to URL, signed with $WASEND_APP_SECRET like Meta's: sent,
then delivered and/or read, or failed with 131049; some posted twice, some
out of order. Point it at ` + "`wasend webhook serve`" + `.

--held-share P answers that share of template sends held_for_quality_assessment
(Meta's template pacing); after --held-for their statuses release them (sent,
delivered…) or, for a --held-drop share, drop them (failed, 132015).`,
		Example: `  wasend sandbox serve --record sandbox.jsonl --throttle 0.02 --drop 0.01
  wasend sandbox serve --fail-number +16505551234=131026 \
      --fatal-account 1065403=190@100`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The secret first: parse validates the webhook options, and
			// webhooks without a key to sign with are refused there.
			if o.Opts.Webhooks.URL != "" {
				secret := fac.Getenv("WASEND_APP_SECRET")
				if secret == "" {
					return errors.New("--webhook: WASEND_APP_SECRET is not set: the sandbox signs its webhooks with it, as Meta does with the app secret")
				}
				o.Opts.Webhooks.AppSecret = []byte(secret)
			}
			if err := o.parse(); err != nil {
				return usageError{err}
			}
			if o.RecordFile != "" {
				file, err := os.OpenFile(o.RecordFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				if err != nil {
					return fmt.Errorf("record file: %w", err)
				}
				defer file.Close()
				o.Opts.Record = file
			}
			stderr := cmd.ErrOrStderr()
			return sandbox.ListenAndServe(cmd.Context(), o.Addr, o.Opts, func(addr string) {
				fmt.Fprintf(stderr, "sandbox listening on http://%s (nothing leaves this machine)\n", addr)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Addr, "addr", "127.0.0.1:8089", "address to listen on")
	fl.StringVar(&o.RecordFile, "record", "", "append one JSON line per request to `FILE`")
	fl.Float64Var(&o.Opts.Throughput, "throughput", sandbox.DefaultThroughput, "messages per second per phone number id (negative: no limit)")
	fl.DurationVar(&o.Opts.PairInterval, "pair-interval", sandbox.DefaultPairInterval, "minimum gap between messages to one recipient (negative: no limit)")
	fl.Int64Var(&f.Seed, "seed", 1, "seed of the fault draws; a seed replays a run")
	fl.Float64Var(&f.Throttle, "throttle", 0, "probability `P` of answering 130429")
	fl.Float64Var(&f.ServerError, "server-error", 0, "probability `P` of answering 131000 (HTTP 500)")
	fl.Float64Var(&f.Drop, "drop", 0, "probability `P` of accepting, then closing the connection without an answer")
	fl.Float64Var(&f.Slow, "slow", 0, "probability `P` of accepting, then answering after --slow-delay")
	fl.DurationVar(&f.SlowDelay, "slow-delay", sandbox.DefaultSlowDelay, "delay of slow answers")
	fl.StringArrayVar(&o.FailNumbers, "fail-number", nil, "always answer `E164=CODE` for this recipient (repeatable)")
	fl.StringArrayVar(&f.UnknownNumbers, "unknown-number", nil, "phone number `ID` that does not exist: reads and sends answer HTTP 400, code 100, error_subcode 33, as Meta does (repeatable)")
	fl.StringArrayVar(&o.FatalAccounts, "fatal-account", nil, "answer `PNID=CODE[@AFTER]` once AFTER messages were accepted for it (repeatable)")
	fl.StringArrayVar(&f.BadTemplates, "bad-template", nil, "template `NAME` that answers 132001 (repeatable)")
	fl.StringArrayVar(&o.CodeProbs, "code", nil, "answer Graph error `CODE=P` with probability P (repeatable)")
	fl.StringArrayVar(&o.Numbers, "number", nil, "what reading a number answers: `PNID=limit:TIER_2K,quality:RED,throughput:HIGH` (repeatable; \"limit:-\" leaves the limit out)")
	fl.Float64Var(&f.Held, "held-share", 0, "share `P` of accepted template sends answered held_for_quality_assessment (template pacing), released or dropped by status webhooks after --held-for")
	fl.Float64Var(&f.HeldDrop, "held-drop", 0, "share `P` of held sends dropped (failed status, 132015) rather than released")
	fl.DurationVar(&f.HeldFor, "held-for", sandbox.DefaultHeldFor, "how long a held send waits before its statuses release or drop it")
	fl.DurationVar(&f.RetryAfter, "retry-after", 0, "Retry-After on throttling answers (0: none, like Meta)")
	fl.BoolVar(&o.Opts.ServiceWindow, "service-window", false, "refuse a text message (131047) from a number the recipient did not write to within 24 h, as Meta does")
	fl.StringVar(&o.Latency, "latency", "0s", "delay every answer by `D`, or by D±J drawn uniformly (e.g. 200ms±50ms, or 200ms+-50ms)")
	addSandboxWebhookFlags(fl, &o.Opts.Webhooks)
	fl.StringVar(&o.Opts.Webhooks.URL, "webhook", "", "post signed status webhooks to `URL`")
	fl.DurationVar(&o.Opts.Webhooks.Delay, "webhook-delay", time.Second, "wait this long after accepting a message before posting its statuses")
	return cmd
}

// parse turns the repeatable string flags into sandbox.Options.
func (o *sandboxServeOptions) parse() error {
	f := &o.Opts.Faults
	l, err := sandbox.ParseLatency(o.Latency)
	if err != nil {
		return err
	}
	o.Opts.Latency = l
	for _, s := range o.FailNumbers {
		num, code, err := sandbox.ParseFailNumber(s)
		if err != nil {
			return err
		}
		if f.FailNumbers == nil {
			f.FailNumbers = make(map[string]int)
		}
		f.FailNumbers[num] = code
	}
	for _, s := range o.FatalAccounts {
		id, fa, err := sandbox.ParseFatalAccount(s)
		if err != nil {
			return err
		}
		if f.FatalAccounts == nil {
			f.FatalAccounts = make(map[string]sandbox.FatalAccount)
		}
		f.FatalAccounts[id] = fa
	}
	for _, s := range o.Numbers {
		id, n, err := sandbox.ParseNumber(s)
		if err != nil {
			return err
		}
		if f.Numbers == nil {
			f.Numbers = make(map[string]sandbox.Number)
		}
		f.Numbers[id] = n
	}
	for _, s := range o.CodeProbs {
		code, p, err := sandbox.ParseCodeProb(s)
		if err != nil {
			return err
		}
		if f.CodeProb == nil {
			f.CodeProb = make(map[int]float64)
		}
		f.CodeProb[code] = p
	}
	return o.Opts.Validate()
}

// addSandboxWebhookFlags adds the shape of the sandbox's status webhooks.
func addSandboxWebhookFlags(fl *pflag.FlagSet, w *sandbox.WebhookOptions) {
	def := demoWebhooks()
	fl.Float64Var(&w.Read, "webhook-read", def.Read, "probability `P` that a delivered message is also read")
	fl.Float64Var(&w.Duplicate, "webhook-duplicate", def.Duplicate, "probability `P` that a status is posted twice")
	fl.Float64Var(&w.Reorder, "webhook-reorder", def.Reorder, "probability `P` that a message's statuses are posted out of order")
	fl.Float64Var(&w.Fail, "webhook-fail", def.Fail, "probability `P` that an accepted message fails later with 131049")
	fl.Float64Var(&w.OptOut, "webhook-opt-out", def.OptOut, "probability `P` that an accepted message fails later with 131050 (the person stopped marketing messages)")
	fl.Float64Var(&w.LateFail, "webhook-late-fail", def.LateFail, "probability `P` that a delivered or read message is then reported failed with 131049")
	fl.Float64Var(&w.Early, "webhook-early", def.Early, "probability `P` that a message's statuses are posted before its send is answered, without callback data")
	// Answers are off by default here, as the other faults: a sandbox
	// serve's recipients stay unsuppressed for the next test run. The
	// in-process demo (campaign run --sandbox) turns them on.
	fl.Float64Var(&w.Reply, "webhook-reply", 0, "probability `P` that the recipient of a delivered message answers it (an inbound text)")
	fl.Float64Var(&w.Stop, "webhook-stop", 0, "probability `P` that the recipient of a delivered message answers STOP")
	fl.Float64Var(&w.StopButton, "webhook-stop-button", 0, "probability `P` that the recipient of a delivered message taps the marketing opt-out button")
	fl.Int64Var(&w.Seed, "webhook-seed", 1, "seed of the webhook draws")
}

// demoWebhooks is how the sandbox's status webhooks behave by default.
func demoWebhooks() sandbox.WebhookOptions {
	return sandbox.WebhookOptions{Read: 0.6, Duplicate: 0.1, Reorder: 0.2, Fail: 0.05, Seed: 1,
		Reply: 0.25, Stop: 0.04, StopButton: 0.03}
}
