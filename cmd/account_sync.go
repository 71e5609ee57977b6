package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

type accountSyncOptions struct {
	Name       string
	PauseOnRed bool
	JSON       bool
	Timeout    time.Duration
}

func newAccountSyncCmd(f *Factory) *cobra.Command {
	var o accountSyncOptions
	cmd := &cobra.Command{
		Use:   "sync [NAME] [--pause-on-red]",
		Short: "Read each number's quality, throughput and messaging limit from Meta",
		Long: `Read what Meta says of each account's number (GET /{phone-number-id}?fields=
quality_rating,throughput,whatsapp_business_manager_messaging_limit,
verified_name,name_status) and keep it: the throughput bounds the account's rate
(80/s, 1,000/s once upgraded), the messaging limit applies to the number's
portfolio (the lower of it and a pinned --limit), and status shows the values
and when they were read. A RED quality rating is warned about loudly; with
--pause-on-red the account is disabled. campaign run reads the same before it
claims anything. Without NAME every enabled account is read.`,
		Example: `  wasend account sync
  wasend account sync main-01 --pause-on-red`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return accountSync(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVar(&o.PauseOnRed, "pause-on-red", false, "disable an account whose quality rating is RED")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 20*time.Second, "per-request timeout")
	addJSONFlag(cmd, &o.JSON)
	return cmd
}

// syncJSON is one account's result in `account sync --json`.
type syncJSON struct {
	Name           string     `json:"name"`
	Result         string     `json:"result"` // ok, throttled, failed, unreachable
	QualityRating  string     `json:"quality_rating,omitempty"`
	Throughput     float64    `json:"throughput,omitempty"`
	MessagingLimit string     `json:"messaging_limit,omitempty"`
	VerifiedName   string     `json:"verified_name,omitempty"`
	NameStatus     string     `json:"name_status,omitempty"`
	Paused         bool       `json:"paused,omitempty"`
	SyncedAt       *time.Time `json:"synced_at,omitempty"`
	Error          string     `json:"error,omitempty"`
}

func accountSync(ctx context.Context, f *Factory, o accountSyncOptions) error {
	return f.withStore(ctx, func(st driver.Driver) error {
		checks, checkErr := checkNamedAccounts(ctx, f, st, o.Name, o.Timeout)
		if checks == nil {
			return checkErr
		}
		if err := runner.RecordSyncs(ctx, st, f.IO, checks, o.PauseOnRed, dbHint(f), f.Now); err != nil {
			return err
		}
		out, failed, err := syncResults(ctx, st, checks, o.PauseOnRed)
		if err != nil {
			return err
		}
		if o.JSON {
			if err := f.IO.JSON(out); err != nil {
				return err
			}
		} else {
			t := newTable(f, "ACCOUNT", "RESULT", "QUALITY", "THROUGHPUT", "MESSAGING LIMIT", "VERIFIED NAME", "NAME STATUS", "DETAIL")
			for _, j := range out {
				tp := "-"
				if j.Throughput > 0 {
					tp = formatThroughput(j.Throughput)
				}
				t.Row(j.Name, j.Result, j.QualityRating, tp, j.MessagingLimit, j.VerifiedName, j.NameStatus, j.Error)
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		switch {
		case checkErr != nil:
			return checkErr
		case failed > 0:
			return fmt.Errorf("%d of %d account(s) could not be synced", failed, len(checks))
		}
		return nil
	})
}

func syncResults(ctx context.Context, st driver.Driver, checks []runner.AccountCheck, pauseOnRed bool) ([]syncJSON, int, error) {
	out := make([]syncJSON, 0, len(checks))
	failed := 0
	for _, c := range checks {
		j := syncJSON{Name: c.Account.Name, Result: string(c.Verdict)}
		if c.Err != nil {
			j.Error = c.Err.Error()
		}
		if c.Verdict != runner.VerdictOK {
			failed++
			out = append(out, j)
			continue
		}
		a, err := st.Account(ctx, c.Account.Name)
		if err != nil {
			return nil, 0, err
		}
		s := a.Synced
		j.QualityRating, j.Throughput, j.MessagingLimit = s.QualityRating, s.Throughput, formatLimit(s.MessagingLimit)
		j.VerifiedName, j.NameStatus, j.Paused = s.VerifiedName, s.NameStatus, pauseOnRed && s.QualityRating == "RED"
		at := s.At.UTC()
		j.SyncedAt = &at
		out = append(out, j)
	}
	return out, failed, nil
}
