package cmd

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/webhook"
)

func newWebhookCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Receive Meta's delivery webhooks: delivered, read and failed messages",
		Long: `The Cloud API's answer to a send only says "accepted". What happened next —
delivered, read, or failed (the per-user marketing limit 131049, an
undeliverable number 131026, …) — arrives later as a status webhook.
wasend webhook serve receives them; campaign run --webhook-addr does the
same inside the sending process.

Statuses are matched to messages by wamid, or by the callback data wasend
sets on every send, which also settles messages left unknown when the
answer to a send was lost.`,
	}
	cmd.AddCommand(newWebhookServeCmd(f), newWebhookImportCmd(f))
	return cmd
}

// webhookOptions are the receiving and applying flags, shared by
// webhook serve, webhook import and campaign run --webhook-addr.
type webhookOptions struct {
	Addr         string
	Path         string
	MetricsAddr  string
	NoReschedule bool
	Restriction  time.Duration
	File         string
	JSON         bool
}

func addApplyFlags(fl *pflag.FlagSet, o *webhookOptions) {
	fl.BoolVar(&o.NoReschedule, "no-reschedule", false, "fail messages Meta did not deliver for the per-user marketing limit (131049) instead of sending them again 24 h later")
}

func (o webhookOptions) policy() webhook.Policy {
	return webhook.Policy{NoReschedule: o.NoReschedule, Restriction: o.Restriction}
}

func newWebhookServeCmd(f *Factory) *cobra.Command {
	o := webhookOptions{Path: "/webhook"}
	cmd := &cobra.Command{
		Use:   "serve --addr :8080 [--path /webhook]",
		Short: "Serve the webhook endpoint Meta posts statuses to",
		Long: `Serve the callback URL of your Meta app (App Dashboard → WhatsApp →
Configuration) over plain HTTP; a reverse proxy in front terminates TLS.

GET answers the verification handshake with hub.challenge when
hub.verify_token equals $WASEND_VERIFY_TOKEN (403 otherwise). A POST is
accepted only with a valid X-Hub-Signature-256 (HMAC-SHA256 of the raw body,
keyed with the app secret in $WASEND_APP_SECRET): unsigned or badly signed
bodies get 401, bodies over 1 MiB 400, and none of them change anything. A
validly signed body is stored in the database as it came and answered 200 at
once (one that is not a notification is kept and skipped when applied);
applying it to the messages happens beside, in the same process.
With --limits (or $WASEND_LIMITS) a number a status reports opted out
(131050) goes on the suppression list every host shares within a second.

Several receivers and senders may share one database.`,
		Example: `  export WASEND_APP_SECRET=... WASEND_VERIFY_TOKEN=...
  wasend webhook serve --addr 127.0.0.1:8080
  wasend webhook serve --addr :8080 --path /meta/webhook \
      --metrics-addr 127.0.0.1:9464`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return webhookServe(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Addr, "addr", ":8080", "address to listen on")
	fl.StringVar(&o.Path, "path", o.Path, "URL path Meta posts to")
	fl.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9464")
	fl.DurationVar(&o.Restriction, "restriction-pause", 6*time.Hour, "stop of an account that a quality or account update flags or restricts")
	addApplyFlags(fl, &o)
	return cmd
}

// webhookSecrets reads the app secret and verify token from the
// environment; they are never stored, logged or printed.
func webhookSecrets(f *Factory) (secret []byte, verify string, err error) {
	s := f.Getenv("WASEND_APP_SECRET")
	if s == "" {
		return nil, "", errors.New("WASEND_APP_SECRET is not set: the app secret (App Dashboard → App settings → Basic) checks each webhook's signature")
	}
	v := f.Getenv("WASEND_VERIFY_TOKEN")
	if v == "" {
		return nil, "", errors.New("WASEND_VERIFY_TOKEN is not set: the verify token you enter with the callback URL in the App Dashboard")
	}
	return []byte(s), v, nil
}

func webhookServe(ctx context.Context, f *Factory, o webhookOptions) error {
	log, err := f.Logger()
	if err != nil {
		return err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	secret, verify, err := webhookSecrets(f)
	if err != nil {
		return err
	}
	// Under --limits, opt-outs the statuses report (131050) go on the list
	// every host shares within a second, as a sender's do; an inbound
	// opt-out (STOP, the opt-out button) wakes the push at once.
	// Receiving never waits for Redis: unreachable at the start, the
	// opt-outs wait in the database for the next sender with --limits.
	hs, closeSync, err := f.hostSync(ctx, st)
	if err != nil {
		f.IO.Warnf("shared suppression list: %v; opt-outs the statuses report stay in this database until a sender with --limits puts them there", err)
	}
	defer closeSync()
	defer runner.TuneReceiverGC()()
	ro := runner.ReceiverOptions{Addr: o.Addr, Path: o.Path, AppSecret: secret, VerifyToken: verify, Policy: o.policy(), Log: log}
	if hs != nil {
		ro.OptedOut = hs.Wake
	}
	rc, err := runner.StartReceiver(ctx, st, ro)
	if err != nil {
		return err
	}
	f.IO.Infof("receiving webhooks on http://%s%s (Ctrl-C stops)", rc.Addr, o.Path)
	if hs != nil {
		syncDone := make(chan struct{})
		go func() { hs.Run(ctx); close(syncDone) }()
		defer func() {
			<-syncDone
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			defer cancel()
			if err := hs.Push(pctx); err != nil {
				f.IO.Warnf("opt-outs not yet on the shared list (%v); the next sender or receiver with --limits on this database puts them there", err)
			}
		}()
	}
	if o.MetricsAddr != "" {
		maddr, mstop, err := runner.ServeMetrics(ctx, st, o.MetricsAddr, rc)
		if err != nil {
			rc.Stop()
			return fmt.Errorf("metrics: %w", err)
		}
		defer mstop()
		f.IO.Infof("metrics on http://%s/metrics", maddr)
	}
	<-ctx.Done()
	return rc.Stop()
}

func newWebhookImportCmd(f *Factory) *cobra.Command {
	var o webhookOptions
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Apply webhook bodies saved elsewhere, one JSON body per line",
		Long: `Apply webhook notifications that another system received and forwarded:
FILE holds one JSON body per line, as Meta posted it ("-" reads stdin). They
are trusted as they are (no signature is checked). Every line must be JSON,
or nothing is stored. Applying is idempotent: importing a file twice, or
statuses the receiver already got, changes nothing.`,
		Example: `  wasend webhook import statuses.jsonl
  wasend webhook import - --json < forwarded.jsonl`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return webhookImport(cmd.Context(), f, o)
		},
	}
	addJSONFlag(cmd, &o.JSON)
	cmd.Flags().Lookup("json").Usage = "print what was applied as JSON"
	cmd.Flags().DurationVar(&o.Restriction, "restriction-pause", 6*time.Hour, "stop of an account that a quality or account update flags or restricts")
	addApplyFlags(cmd.Flags(), &o)
	return cmd
}

// readBodies reads one JSON body per line; blank lines are skipped.
func readBodies(name string, r io.Reader) ([][]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), webhook.MaxBody+1)
	var bodies [][]byte
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%s:%d: not a JSON body; nothing was stored", name, line)
		}
		bodies = append(bodies, append([]byte(nil), b...))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line is over 1 MiB; nothing was stored", name)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return bodies, nil
}

type applyJSON struct {
	Bodies      int            `json:"bodies"`
	Malformed   int            `json:"malformed"`
	Statuses    int            `json:"statuses"`
	ByStatus    map[string]int `json:"by_status"`
	Duplicates  int            `json:"duplicates"`
	Unmatched   int            `json:"unmatched"`
	Waiting     int            `json:"waiting_for_send_record"`
	Settled     int            `json:"unknown_settled"`
	Advanced    int            `json:"delivery_advanced"`
	Failed      int            `json:"failed_after_send"`
	Rescheduled int            `json:"rescheduled"`
	Paused      int            `json:"campaigns_paused"`
	Stopped     int            `json:"accounts_stopped"`
	NotResent   int            `json:"not_resent"`
	Skipped     []string       `json:"not_applied"`
	// Inbound messages read, of which unknown (a type or shape wasend does
	// not read: kept and counted), replies, opt-outs and opt-ins.
	Inbound        int `json:"inbound"`
	InboundUnknown int `json:"inbound_unknown"`
	Replies        int `json:"replies"`
	OptOuts        int `json:"opt_outs"`
	OptIns         int `json:"opt_ins"`
}

func webhookImport(ctx context.Context, f *Factory, o webhookOptions) error {
	in, name := io.Reader(os.Stdin), "stdin"
	if o.File != "-" {
		file, err := os.Open(o.File)
		if err != nil {
			return err
		}
		defer file.Close()
		in, name = file, o.File
	}
	bodies, err := readBodies(name, in)
	if err != nil {
		return err
	}
	log, err := f.Logger()
	if err != nil {
		return err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.AddToInbox(ctx, bodies); err != nil {
		return err
	}
	rep, err := webhook.NewApplier(st, o.policy(), nil, log).Drain(ctx)
	if err != nil {
		return fmt.Errorf("apply %s: %w (the bodies are stored and applied by the next receiver or import)", name, err)
	}
	return printApply(f, rep, o.JSON)
}

func printApply(f *Factory, rep campaign.ApplyReport, asJSON bool) error {
	j := applyJSON{Bodies: rep.Bodies, Malformed: rep.Malformed, Statuses: rep.Statuses, ByStatus: map[string]int{},
		Duplicates: rep.Duplicates, Unmatched: rep.Unmatched, Waiting: rep.Deferred, Settled: rep.Adopted,
		Advanced: rep.Advanced, Failed: rep.Failed, Rescheduled: rep.Rescheduled, Paused: rep.Paused, Stopped: rep.Stopped,
		NotResent: rep.NotResent, Skipped: append([]string{}, rep.Skips...),
		Inbound: rep.Inbound, InboundUnknown: rep.InboundUnknown, Replies: rep.Replies, OptOuts: rep.OptOuts, OptIns: rep.OptIns}
	for k, v := range rep.ByStatus {
		j.ByStatus[string(k)] = v
	}
	if asJSON {
		return f.IO.JSON(j)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "applied %d bodies (%d not notifications): %d statuses, %d duplicates, %d for messages wasend did not send\n",
		j.Bodies, j.Malformed, j.Statuses, j.Duplicates, j.Unmatched)
	fmt.Fprintf(w, "sent %d, delivered %d, read %d, failed %d\n", j.ByStatus["sent"], j.ByStatus["delivered"], j.ByStatus["read"], j.ByStatus["failed"])
	fmt.Fprintf(w, "unknown rows proven sent %d, failed after send %d, rescheduled %d, waiting for their send to be recorded %d\n",
		j.Settled, j.Failed, j.Rescheduled, j.Waiting)
	if j.Inbound > 0 {
		fmt.Fprintf(w, "inbound messages %d (%d of a type wasend does not read, kept): %d replies, %d opt-outs (suppressed), %d opt-ins (see suppress list)\n",
			j.Inbound, j.InboundUnknown, j.Replies, j.OptOuts, j.OptIns)
	}
	if j.Paused > 0 || j.Stopped > 0 {
		fmt.Fprintf(w, "campaigns paused %d, accounts stopped %d (see `wasend status`)\n", j.Paused, j.Stopped)
	}
	if j.NotResent > 0 {
		fmt.Fprintf(w, "failures not sent again %d (delivered or read before, or the campaign was cancelled)\n", j.NotResent)
	}
	for _, why := range j.Skipped {
		fmt.Fprintf(w, "not applied (kept with its body): %s\n", why)
	}
	return nil
}

// runWebhooks is the receiver campaign run serves beside sending: on
// --webhook-addr, and always with --sandbox, whose stand-in then posts its
// status webhooks to it (signed with a secret made up for the run unless
// $WASEND_APP_SECRET is set); nil when there is none.
func runWebhooks(f *Factory, o runOptions) *runner.RunWebhooks {
	if o.WebhookAddr == "" && !f.Sandbox {
		return nil
	}
	w := &runner.RunWebhooks{Addr: o.WebhookAddr, Path: o.WebhookPath, NoReschedule: o.NoReschedule}
	if !f.Sandbox {
		w.Secrets = func() ([]byte, string, error) {
			secret, verify, err := webhookSecrets(f)
			if err != nil {
				return nil, "", fmt.Errorf("--webhook-addr: %w", err)
			}
			return secret, verify, nil
		}
		return w
	}
	w.Sandbox = demoWebhooks()
	w.Secrets = func() ([]byte, string, error) {
		secret, verify := []byte(f.Getenv("WASEND_APP_SECRET")), f.Getenv("WASEND_VERIFY_TOKEN")
		if len(secret) == 0 {
			secret = []byte(randomToken())
		}
		if verify == "" {
			verify = randomToken()
		}
		return secret, verify, nil
	}
	return w
}

func randomToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// reportDelivery prints what the status webhooks applied during the run
// said of the campaign.
func reportDelivery(ctx context.Context, f *Factory, st driver.Driver, id int64) {
	d, err := campaignDelivery(ctx, f, st, id, report.UnknownGrace)
	if err != nil || d == nil {
		return
	}
	printRunDelivery(f, d)
}

// printRunDelivery is a run's last word on delivery: a line for what was
// sent and delivered, one for read and failed, one for replies and
// opt-outs, each within 80 columns for counts under 100 000.
func printRunDelivery(f *Factory, d *report.Delivery) {
	f.IO.Infof("delivery (status webhooks): %d sent, %d delivered (%s)", d.Sent, d.Delivered, pct(d.DeliveredRate))
	f.IO.Infof("read: %d (%s of delivered), failed after send: %d", d.Read, pct(d.ReadRate), d.FailedAfterSend)
	if d.Replied > 0 || d.OptedOut > 0 {
		f.IO.Infof("replies (inbound messages): %d (%s of sent), %d opted out and suppressed", d.Replied, pct(d.ReplyRate), d.OptedOut)
	}
}
