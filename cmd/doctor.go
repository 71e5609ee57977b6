package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
)

type doctorOptions struct {
	JSON       bool
	WebhookURL string
	Timeout    time.Duration
}

func newDoctorCmd(f *Factory) *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the set-up end to end and say how to fix what is wrong",
		Long: `Check everything a run depends on: the database (writable, migrated, zone of
quota days), each enabled account (token variable set, GET /{phone-number-id}
answers, quality, throughput, messaging limit, WABA id), each WABA's
subscribed apps (webhooks arrive) and its templates (synced, approved), the
webhook secrets, the receiver's public URL with --webhook-url (Meta's
verification, then a signed test post), Redis under --limits (answers, clock
within 1 s of this host's), the API version's end date, the quota day, and
each WABA's Marketing Messages API onboarding as template sync read it (a
warning when --api marketing would be refused).

One line a check; what fails or warns says why, and the command that fixes
it. The last line is the verdict. Exits 1 when a check failed.`,
		Example: `  wasend doctor
  wasend doctor --webhook-url https://hooks.example.com/wasend
  wasend doctor --jq '.findings[] | select(.fix) | .fix'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return doctorRun(cmd.Context(), f, o)
		},
	}
	addJSONFlag(cmd, &o.JSON)
	cmd.Flags().StringVar(&o.WebhookURL, "webhook-url", "", "the webhook receiver's public `URL` (the callback URL): verify it and post a signed test webhook")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 10*time.Second, "per-request timeout")
	return cmd
}

func doctorRun(ctx context.Context, f *Factory, o doctorOptions) error {
	do := runner.DoctorOptions{API: f.apiConfig(), ZoneAsked: f.Getenv("WASEND_TZ"),
		AppSecret: f.Getenv("WASEND_APP_SECRET"), VerifyToken: f.Getenv("WASEND_VERIFY_TOKEN"), WebhookURL: o.WebhookURL,
		Timeout: o.Timeout, Now: f.Now, Flags: dbHint(f)}
	do.DatabasePath, do.StoreErr = f.DatabasePath()
	do.DatabasePath = runner.RedactDB(do.DatabasePath)
	if do.StoreErr == nil {
		do.Store, do.StoreErr = f.Store(ctx)
	}
	if do.Store != nil {
		defer do.Store.Close()
	}
	if lim, err := f.sharedLimits(); err != nil {
		do.LimitsErr = err
	} else if lim != nil {
		defer lim.Close()
		do.Limits = lim
	}
	rep := runner.Doctor(ctx, do)
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.JSON {
		if err := f.IO.JSON(rep); err != nil {
			return err
		}
	} else {
		width := 0
		if f.IO.IsStdoutTTY() {
			width = f.IO.TerminalWidth()
		}
		if err := rep.Write(f.IO.Out, width, f.IO.IsStdoutTTY()); err != nil {
			return err
		}
	}
	if rep.Failed() {
		return fmt.Errorf("doctor: %d of %d checks failed", rep.Failures, len(rep.Findings))
	}
	return nil
}
