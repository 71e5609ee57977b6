package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
)

type accountTestOptions struct {
	Name    string
	JSON    bool
	Timeout time.Duration
}

func newAccountTestCmd(f *Factory) *cobra.Command {
	var o accountTestOptions
	cmd := &cobra.Command{
		Use:   "test [NAME]",
		Short: "Check the API base URL and each account's token and number",
		Long: `Check what ` + "`campaign run`" + ` checks before it claims anything: one cheap call per
account (GET /{version}/{phone-number-id}) proves that WASEND_API_BASE answers
as the Graph API, that the account's token is valid and that its number exists
for that token. Without NAME every enabled account is checked. Exits 1 when an
account fails or the API cannot be reached.`,
		Example: `  wasend account test
  wasend account test main-01 --json`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return accountTest(cmd.Context(), f, o)
		},
	}
	addJSONFlag(cmd, &o.JSON)
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 20*time.Second, "per-request timeout")
	return cmd
}

// accountCheckJSON is one account's result in `account test --json`.
type accountCheckJSON struct {
	Name               string `json:"name"`
	PhoneNumberID      string `json:"phone_number_id"`
	Result             string `json:"result"` // ok, throttled, failed, unreachable
	DisplayPhoneNumber string `json:"display_phone_number,omitempty"`
	VerifiedName       string `json:"verified_name,omitempty"`
	QualityRating      string `json:"quality_rating,omitempty"`
	ErrorCode          int    `json:"error_code,omitempty"`
	Error              string `json:"error,omitempty"`
}

func accountTest(ctx context.Context, f *Factory, o accountTestOptions) error {
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	checks, checkErr := checkNamedAccounts(ctx, f, st, o.Name, o.Timeout)
	if checks == nil {
		return checkErr
	}
	if err := runner.RecordChecks(ctx, st, checks, f.Now()); err != nil {
		return err
	}
	out := make([]accountCheckJSON, len(checks))
	failed := 0
	for i, c := range checks {
		j := accountCheckJSON{Name: c.Account.Name, PhoneNumberID: c.Account.PhoneNumberID, Result: string(c.Verdict),
			DisplayPhoneNumber: c.Number.DisplayPhoneNumber, VerifiedName: c.Number.VerifiedName,
			QualityRating: c.Number.QualityRating, ErrorCode: c.Code}
		if c.Err != nil {
			j.Error = c.Err.Error()
		}
		if c.Verdict != runner.VerdictOK {
			failed++
		}
		out[i] = j
	}
	if o.JSON {
		if err := f.IO.JSON(out); err != nil {
			return err
		}
	} else {
		t := newTable(f, "ACCOUNT", "PHONE NUMBER ID", "RESULT", "DETAIL")
		for _, j := range out {
			detail := j.Error
			if j.Result == string(runner.VerdictOK) {
				detail = fmt.Sprintf("%s %q, quality %s", j.DisplayPhoneNumber, j.VerifiedName, j.QualityRating)
			}
			t.Row(j.Name, j.PhoneNumberID, j.Result, detail)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	switch {
	case checkErr != nil:
		return checkErr
	case failed > 0:
		return fmt.Errorf("%d of %d account(s) did not pass the check", failed, len(checks))
	}
	return nil
}

// checkNamedAccounts makes the preflight read (GET /{phone-number-id}) of
// the account called name, or of every enabled account when name is "",
// against the Cloud API or, with --sandbox, a sandbox started for it. It
// returns nil checks with the error when nothing could be checked.
func checkNamedAccounts(ctx context.Context, f *Factory, st driver.Driver, name string, timeout time.Duration) ([]runner.AccountCheck, error) {
	api, err := f.graphAPI(ctx, st, sandbox.Options{})
	if err != nil {
		return nil, err
	}
	defer api.Close()
	all, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	var accts []campaign.Account
	for _, a := range all {
		if name == a.Name || name == "" && !a.Disabled {
			accts = append(accts, a.Account)
		}
	}
	if name != "" && len(accts) == 0 {
		return nil, fmt.Errorf("account %q: %w (see `wasend account list`)", name, campaign.ErrNotFound)
	}
	client := api.Client(timeout)
	defer client.CloseIdleConnections()
	return runner.CheckAccounts(ctx, client, api.BaseURL, accts, api.Token)
}
