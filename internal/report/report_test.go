package report

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

var t0 = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

func TestCampaignState(t *testing.T) {
	acct := func(name string, used, limit int) campaign.AccountStatus {
		return campaign.AccountStatus{Account: campaign.Account{Name: name}, UsedToday: used,
			Limits: campaign.Limits{DailyCap: limit}}
	}
	open := []campaign.AccountStatus{acct("a", 50, 50), acct("b", 3, 300)}
	capped := []campaign.AccountStatus{acct("a", 50, 50), acct("b", 300, 300)}
	running := campaign.Campaign{State: campaign.CampaignRunning}
	for _, tt := range []struct {
		name    string
		c       campaign.Campaign
		live    bool
		started bool
		accts   []campaign.AccountStatus
		dropped []readmodel.Dropped
		want    string
	}{
		{"a live runner sends it", running, true, true, open, nil, "running"},
		{"a live runner waits: every account capped", running, true, true, capped, nil, "waiting for quota"},
		{"the open account is dropped", running, true, true, open, []readmodel.Dropped{{Account: "b"}}, "waiting for quota"},
		{"imported, never started", running, false, false, open, nil, "ready"},
		{"started, no process now", running, false, true, open, nil, "interrupted"},
		{"no process, capped: interrupted all the same", running, false, true, capped, nil, "interrupted"},
		{"paused stays paused", campaign.Campaign{State: campaign.CampaignPaused}, true, true, open, nil, "paused"},
		{"finished stays finished", campaign.Campaign{State: campaign.CampaignFinished}, false, true, open, nil, "finished"},
		{"a state added later shows as stored", campaign.Campaign{State: "cancelled"}, false, true, open, nil, "cancelled"},
	} {
		if got := CampaignState(tt.c, tt.live, tt.started, tt.accts, tt.dropped); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// An account out of tokens is "waiting" only while a campaign is sent.
func TestAccountStateWaiting(t *testing.T) {
	a := campaign.AccountStatus{Tokens: 0.2, At: t0, Limits: campaign.Limits{DailyCap: 50}}
	if got := AccountState(a, time.UTC, true); got != "waiting" {
		t.Errorf("sending: %q, want waiting", got)
	}
	if got := AccountState(a, time.UTC, false); got != "ok" {
		t.Errorf("nothing sending: %q, want ok", got)
	}
}

// seed imports campaign 1 with n recipients and sends them one a second
// from t0 through main-01, the first throttled once.
func seed(t *testing.T, n int) (*store.Store, *time.Time) {
	t.Helper()
	ctx := context.Background()
	now := t0
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), driver.Options{Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.AddAccount(ctx, campaign.Account{Name: "main-01", PhoneNumberID: "1", Tier: campaign.TierActive, TokenEnv: "T"}); err != nil {
		t.Fatal(err)
	}
	im, err := st.Import(ctx, campaign.Campaign{Name: "c.csv", Fingerprint: "fp", Source: "c.csv",
		Spec: campaign.Spec{Kind: campaign.KindText, Text: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := im.Add(ctx, campaign.Message{Line: i + 2, Input: "x", Phone: fmt.Sprintf("+4915100000%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return st, &now
}

func TestLiveRunnerMakesRunning(t *testing.T) {
	ctx := context.Background()
	st, now := seed(t, 2)
	state := func() string {
		t.Helper()
		camps, err := Reporter{Src: st, Reads: readmodel.New(st), Now: *now, Loc: time.UTC}.Campaigns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return camps[0].State
	}
	if got := state(); got != "ready" {
		t.Errorf("imported, never started: %q, want ready", got)
	}
	r := campaign.Runner{ID: "r1", CampaignID: 1, Host: "h", PID: 1, StartedAt: *now, HeartbeatAt: *now}
	if err := st.RegisterRunner(ctx, r); err != nil {
		t.Fatal(err)
	}
	cl, err := storetest.One(claim.New(st).ClaimN(ctx, 1, "r1", *now, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordAll(ctx, "r1", []campaign.Result{{Claim: cl, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w", Class: "ok"}, At: *now}}); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "running" {
		t.Errorf("a runner beat just now: %q, want running", got)
	}
	*now = now.Add(LiveWithin + time.Second) // the runner died without a word
	if got := state(); got != "interrupted" {
		t.Errorf("the runner silent for %v: %q, want interrupted", LiveWithin+time.Second, got)
	}
}

// A finished campaign's figures are the same an hour or a day later, when
// its account's throttled rate has recovered.
func TestFinishedFiguresStop(t *testing.T) {
	ctx := context.Background()
	st, now := seed(t, 4)
	for i := 0; ; i++ {
		*now = t0.Add(time.Duration(i) * time.Second)
		cl, err := storetest.One(claim.New(st).ClaimN(ctx, 1, "r1", *now, 1))
		if err != nil {
			break // nothing left
		}
		o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("w", i), Class: "ok"}
		if i == 0 {
			o = campaign.Outcome{Kind: campaign.OutcomeRetry, ErrorCode: 130429, Class: "throttled", Error: "130429 Rate limit hit"}
		}
		if err := st.RecordAll(ctx, "r1", []campaign.Result{{Claim: cl, Outcome: o, At: now.Add(100 * time.Millisecond)}}); err != nil {
			t.Fatal(err)
		}
		if i > 20 {
			t.Fatal("too many claims")
		}
	}
	if err := storetest.SetCampaignState(ctx, st.Path(), 1, campaign.CampaignFinished, ""); err != nil {
		t.Fatal(err)
	}
	figures := func(at time.Time) Campaign {
		t.Helper()
		*now = at
		camps, err := Reporter{Src: st, Reads: readmodel.New(st), Now: at, Loc: time.UTC}.Campaigns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return camps[0]
	}
	first := figures(t0.Add(10 * time.Second))
	if first.State != "finished" || first.Sent != 4 || first.LastHour.Attempts != 5 {
		t.Fatalf("finished campaign: %+v", first)
	}
	for _, later := range []time.Duration{time.Hour, 2 * time.Hour, 48 * time.Hour} {
		if got := figures(t0.Add(later)); !reflect.DeepEqual(got, first) {
			t.Errorf("%v later the figures changed:\n%+v\nwas\n%+v", later, got, first)
		}
	}
}

// TestRetryLater: an interrupted campaign whose open rows all wait for a
// later retry is not cut short; it has retries due later.
func TestRetryLater(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	later := now.Add(24 * time.Hour)
	for _, tt := range []struct {
		name  string
		state string
		q     readmodel.Queue
		want  string
	}{
		{"every open row waits", StateInterrupted, readmodel.Queue{Waiting: 2, NextDue: later}, StateRetryLater},
		{"a row is ready", StateInterrupted, readmodel.Queue{Ready: 1, Waiting: 2, NextDue: later}, StateInterrupted},
		{"a row in flight (a dead process)", StateInterrupted, readmodel.Queue{InFlight: 1, NextDue: later}, StateInterrupted},
		{"nothing waits", StateInterrupted, readmodel.Queue{}, StateInterrupted},
		{"a live run waits", StateRunning, readmodel.Queue{Waiting: 2, NextDue: later}, StateRunning},
	} {
		if got := retryLater(tt.state, tt.q, now); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// An account whose open quota day is before today's date in the zone of
// quota days missed its reset; one reset today, or on a day ahead (a zone
// changed to one behind), did not.
func TestQuotaResetOverdue(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	acct := func(name, day string) AccountStatus {
		return AccountStatus{Account: Account{Name: name, QuotaDay: day}}
	}
	// 03:00 UTC on Dec 2 is still Dec 1 in New York.
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		loc   *time.Location
		accts []AccountStatus
		want  *QuotaResetOverdue
	}{
		{"reset today", time.UTC, []AccountStatus{acct("a", "2026-12-02"), acct("b", "2026-12-03")}, nil},
		{"not yet the next day in the quota zone", ny, []AccountStatus{acct("a", "2026-12-01")}, nil},
		{"missed", time.UTC, []AccountStatus{acct("a", "2026-12-01"), acct("b", "2026-12-02"), acct("c", "2026-11-30"), acct("new", "")},
			&QuotaResetOverdue{Today: "2026-12-02", Zone: "UTC", OpenDay: "2026-11-30", Accounts: []string{"a", "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quotaResetOverdue(tc.accts, now, tc.loc); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRunnersLostWithinTwoHeartbeats: status lists each runner by host with
// its heartbeat's age and its leased rows; one that stops beating shows as
// lost once two heartbeats are missed, not before.
func TestRunnersLostWithinTwoHeartbeats(t *testing.T) {
	ctx := context.Background()
	st, now := seed(t, 3)
	for _, r := range []campaign.Runner{{ID: "b1", Host: "b"}, {ID: "a1", Host: "a"}} {
		r.CampaignID, r.PID, r.StartedAt, r.HeartbeatAt = 1, 7, *now, *now
		if err := st.RegisterRunner(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := claim.New(st).ClaimN(ctx, 1, "a1", *now, 2); err != nil {
		t.Fatal(err)
	}
	start := *now
	for _, tt := range []struct {
		after  time.Duration
		beatB  bool // b beats on, a went silent at start
		wantA  bool // a lost
		ageA   float64
		leased int
	}{
		{0, true, false, 0, 2},
		{campaign.HeartbeatEvery, true, false, 2, 2},
		{campaign.LostAfter, true, false, 4, 2},
		{campaign.LostAfter + time.Millisecond, true, true, 4.001, 2},
	} {
		*now = start.Add(tt.after)
		if err := st.Heartbeat(ctx, "b1", *now); err != nil {
			t.Fatal(err)
		}
		out, err := Reporter{Src: st, Reads: readmodel.New(st), Now: *now, Loc: time.UTC}.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Runners) != 2 || out.Runners[0].Host != "a" || out.Runners[1].Host != "b" {
			t.Fatalf("+%v: runners %+v, want a's then b's", tt.after, out.Runners)
		}
		a, b := out.Runners[0], out.Runners[1]
		if a.Lost != tt.wantA || a.HeartbeatAge != tt.ageA || a.Leased != tt.leased || a.Campaign != 1 || a.PID != 7 {
			t.Errorf("+%v: a %+v, want lost %v, heartbeat %vs ago, %d leased", tt.after, a, tt.wantA, tt.ageA, tt.leased)
		}
		if b.Lost || b.HeartbeatAge != 0 || b.Leased != 0 {
			t.Errorf("+%v: b %+v, want live, beating, nothing leased", tt.after, b)
		}
	}
}
