package dispatch_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/sandbox"
)

// twoAccounts is an env with accounts "a" (phone number id 1001) and "b"
// (1002) on a roomy tier, and n recipients.
func twoAccounts(t *testing.T, faults sandbox.Faults, n int) (*env, campaign.Campaign) {
	t.Helper()
	e := newEnv(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), faults)
	if err := e.st.SetTier(e.ctx, campaign.TierActive, campaign.Limits{Rate: 1, Burst: 5, DailyCap: 10000}); err != nil {
		t.Fatal(err)
	}
	e.addAccount("a", "1001", campaign.TierActive)
	e.addAccount("b", "1002", campaign.TierActive)
	return e, e.importN(n)
}

// TestThrottledAccountCoolsDown: an account answering 130429 to every
// request is blocked, not rate-limited. Its bucket's burst goes at once (a
// burst above a ceiling is throttled in a row too), then once the run of
// throttles has lasted a second it rests 30 s, then 60 s, 120 s, 120 s
// between tries; its rows go to the other account without spending their
// retry budget, and its rate is left alone: a lower rate would not help.
func TestThrottledAccountCoolsDown(t *testing.T) {
	e, c := twoAccounts(t, sandbox.Faults{FatalAccounts: map[string]sandbox.FatalAccount{"1001": {Code: 130429}}}, 400)
	if err := e.engine(c, dispatch.Options{Policy: dispatch.Policy{Workers: 1}}).Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	for phone, r := range e.rows() {
		if r.state != campaign.Sent || r.retries != 0 {
			t.Fatalf("%s: %+v, want sent with no retry spent", phone, r)
		}
	}
	tries := e.tries()["a"]
	first := ratelimit.BlockedRun - 1 // the try that ends the run's first second
	if len(tries) < first+5 {
		t.Fatalf("account a tried %d times, want at least %d over the run", len(tries), first+5)
	}
	if d := tries[first].Sub(tries[0]); d < time.Second || d > 2*time.Second {
		t.Errorf("tries 1 to %d took %v, want the burst and a second", first+1, d)
	}
	want := []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second, 120 * time.Second}
	for i, w := range want {
		// The account is free again at the end of its rest; the engine
		// claims for it at its next token, well within a second.
		if gap := tries[first+i+1].Sub(tries[first+i]); gap < w || gap > w+time.Second {
			t.Errorf("rest %d: %v between tries, want %v", i+1, gap, w)
		}
	}
	a, err := e.st.Account(e.ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.LastErrorCode != 130429 || a.RateFactor != 1 {
		t.Errorf("account a: last error %d, rate factor %v; want 130429 and the rate as it was", a.LastErrorCode, a.RateFactor)
	}
}

func TestFailureClasses(t *testing.T) {
	tests := []struct {
		name    string
		faults  sandbox.Faults
		opts    dispatch.Options
		wantErr error
		check   func(t *testing.T, e *env, c campaign.Campaign)
	}{
		{
			name:   "account-fatal drops the account; its rows go to the other",
			faults: sandbox.Faults{FatalAccounts: map[string]sandbox.FatalAccount{"1001": {Code: 190}}},
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				if got := len(e.tries()["a"]); got != 1 {
					t.Errorf("account a tried %d times, want 1: nothing after its first 190", got)
				}
				expectAll(t, e, campaign.Sent)
				dropped, err := readmodel.New(e.st).DroppedAccounts(e.ctx, c.ID)
				if err != nil || len(dropped) != 1 || dropped[0].Account != "a" || dropped[0].ErrorCode != 190 {
					t.Errorf("dropped accounts %+v (%v), want a with 190", dropped, err)
				}
			},
		},
		{
			name: "every account fatal pauses the campaign",
			faults: sandbox.Faults{FatalAccounts: map[string]sandbox.FatalAccount{
				"1001": {Code: 190}, "1002": {Code: 131031}}},
			wantErr: campaign.ErrNoUsableAccount,
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				expectAll(t, e, campaign.Pending)
				expectPaused(t, e, c, "every account failed")
			},
		},
		{
			name:   "the app-wide limit (4) rests every account",
			faults: sandbox.Faults{CodeProb: map[int]float64{4: 0.2}, Seed: 3},
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				expectAll(t, e, campaign.Sent)
				limited := e.attemptsWithCode(4)
				if len(limited) == 0 {
					t.Fatal("no error 4 drawn: the test proves nothing")
				}
				for _, times := range e.tries() {
					for _, at := range times {
						for _, l := range limited {
							if at.After(l) && at.Before(l.Add(30*time.Second)) {
								t.Fatalf("a send %v after an app-wide error 4, during the rest", at.Sub(l))
							}
						}
					}
				}
			},
		},
		{
			name:    "a template error pauses the campaign and fails no row",
			faults:  sandbox.Faults{BadTemplates: []string{sandbox.DemoTemplate}},
			wantErr: campaign.ErrPaused,
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				expectAll(t, e, campaign.Pending)
				expectPaused(t, e, c, "132001")
			},
		},
		{
			name:   "a spam restriction stops the account for hours",
			faults: sandbox.Faults{FatalAccounts: map[string]sandbox.FatalAccount{"1001": {Code: 131048}}},
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				expectAll(t, e, campaign.Sent)
				a, err := e.st.Account(e.ctx, "a")
				if err != nil {
					t.Fatal(err)
				}
				if rest := a.CooldownUntil.Sub(e.clock.Now()); rest < 5*time.Hour || !strings.Contains(a.Restriction, "131048") {
					t.Errorf("account a rests %v more, restriction %q; want hours, naming 131048", rest, a.Restriction)
				}
			},
		},
		{
			name:   "an opt-out fails the row and suppresses the number",
			faults: sandbox.Faults{FailNumbers: map[string]int{first: 131050}},
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				if r := e.rows()[first]; r.state != campaign.Failed || r.errorCode.Int64 != 131050 {
					t.Errorf("row %+v, want failed with 131050", r)
				}
				if why, err := readmodel.New(e.st).SuppressedIn(e.ctx, []string{first}); err != nil || why == nil {
					t.Errorf("%s not on the suppression list (%v)", first, err)
				}
			},
		},
		{
			name: "too many permanent failures pause the campaign",
			faults: sandbox.Faults{FailNumbers: func() map[string]int {
				m := map[string]int{}
				for _, p := range []string{"+4915110000000", "+4915110000001", "+4915110000002", "+4915110000003",
					"+4915110000004", "+4915110000005", "+4915110000006", "+4915110000007", "+4915110000008"} {
					m[p] = 131026
				}
				return m
			}()},
			opts:    dispatch.Options{Policy: dispatch.Policy{ErrorPauseRatio: 0.2}},
			wantErr: campaign.ErrPaused,
			check: func(t *testing.T, e *env, c campaign.Campaign) {
				expectPaused(t, e, c, "failed permanently")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, c := twoAccounts(t, tt.faults, 30)
			tt.opts.Workers = 1
			err := e.engine(c, tt.opts).Run(e.ctx)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run: %v, want %v", err, tt.wantErr)
			}
			tt.check(t, e, c)
		})
	}
}

func expectAll(t *testing.T, e *env, want campaign.State) {
	t.Helper()
	for phone, r := range e.rows() {
		if r.state != want || r.retries != 0 {
			t.Errorf("%s: %+v, want %s with no retry spent", phone, r, want)
		}
	}
}

func expectPaused(t *testing.T, e *env, c campaign.Campaign, reason string) {
	t.Helper()
	got, err := e.st.Campaign(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != campaign.CampaignPaused || !strings.Contains(got.PauseReason, reason) {
		t.Errorf("campaign %s (%q), want paused with a reason containing %q", got.State, got.PauseReason, reason)
	}
}

// attemptsWithCode returns when the attempts answered with code were made.
func (e *env) attemptsWithCode(code int) []time.Time {
	e.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.path+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT claimed_at FROM attempts WHERE error_code = ? ORDER BY claimed_at`, code)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, time.Unix(0, at).UTC())
	}
	return out
}
