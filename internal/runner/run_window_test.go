package runner_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
)

// TestRunSandboxWindowPerNumber: `campaign run --sandbox` over the demo's
// three numbers, whose sandbox refuses free-form text outside the window
// per (number, person) as Meta does (131047). A template campaign goes to
// a file; then each recipient writes to the next number after the one that
// sent them the template (not the one the sticky sender would choose), and
// one number is disabled. A --text campaign to the same file sends every
// recipient their text from the number they wrote to — a fresh sandbox,
// started from the windows wasend's database holds, refuses none — and
// skips those who wrote to the disabled number only, with the reason,
// rather than send from a number whose window is closed.
func TestRunSandboxWindowPerNumber(t *testing.T) {
	ctx := context.Background()
	st := sandboxStore(t)
	run := func(spec campaign.Spec) runner.Result {
		t.Helper()
		var errOut bytes.Buffer
		o := sandboxRun(st, spec, sandbox.WebhookOptions{Seed: 3}, &errOut)
		o.Policy.ErrorPauseRatio = 0 // a refusal is what this test looks for
		res, err := runner.Run(ctx, o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, errOut.String())
		}
		return res
	}
	type row struct {
		account int64
		state   string
		code    int
		why     string
	}
	rowsOf := func(id int64) map[string]row {
		t.Helper()
		rs, err := st.Reader().QueryContext(ctx, `SELECT phone, coalesce(account_id, 0), state, coalesce(error_code, 0),
			coalesce(error_message, '') FROM messages WHERE campaign_id = ?`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		out := map[string]row{}
		for rs.Next() {
			var (
				phone string
				r     row
			)
			if err := rs.Scan(&phone, &r.account, &r.state, &r.code, &r.why); err != nil {
				t.Fatal(err)
			}
			out[phone] = r
		}
		return out
	}

	tmpl := rowsOf(run(demoSpec).Campaign.ID)
	accts, err := st.Accounts(ctx)
	if err != nil || len(accts) != 3 {
		t.Fatalf("accounts %v, %v; want the demo's three", accts, err)
	}
	next := map[int64]campaign.AccountStatus{}
	for i, a := range accts {
		next[a.ID] = accts[(i+1)%len(accts)]
	}
	wroteTo := map[string]int64{}
	if err := st.WithInbox(ctx, func(tx driver.InboxTx, now time.Time) error {
		for phone, r := range tmpl {
			if r.state != "sent" {
				continue
			}
			a := next[r.account]
			wroteTo[phone] = a.ID
			if _, err := tx.KeepInbound(ctx, campaign.InboundRow{ID: "wamid.in." + phone, Phone: phone, PhoneNumberID: a.PhoneNumberID,
				AccountID: a.ID, At: now.Add(-time.Hour), ReceivedAt: now, Type: "text", Text: "hi"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	off := true
	warm, err := st.UpdateAccount(ctx, "sandbox-warm", campaign.AccountChange{Disabled: &off})
	if err != nil {
		t.Fatal(err)
	}

	text := rowsOf(run(campaign.Spec{Kind: campaign.KindText, Text: "Thanks for writing"}).Campaign.ID)
	skipped, sent := 0, 0
	for phone, a := range wroteTo {
		xr, ok := text[phone]
		switch {
		case !ok:
			t.Errorf("%s wrote, and has no row in the text campaign", phone)
		case a == warm.ID:
			skipped++
			if xr.state != "failed" || xr.code != campaign.CodeNoWindow || !strings.Contains(xr.why, "which does not send this campaign") {
				t.Errorf("%s wrote to the disabled number only; its text: %s %d %q, want skipped for the window", phone, xr.state, xr.code, xr.why)
			}
		case xr.state != "sent" || xr.code != 0:
			t.Errorf("%s's text: %s %d %q; want sent (the sandbox refuses it outside the window)", phone, xr.state, xr.code, xr.why)
		case xr.account != a:
			t.Errorf("%s's text went from account %d, they wrote to account %d's number", phone, xr.account, a)
		default:
			sent++
		}
	}
	if skipped == 0 || sent < 2 {
		t.Errorf("%d texts skipped, %d sent: want some of each", skipped, sent)
	}
}
