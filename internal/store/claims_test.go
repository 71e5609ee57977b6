package store

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/ratelimit"
)

// claimStep is one Claim at a named instant: either an account is charged,
// or Claim waits for a reason until an instant (zero: no known instant).
type claimStep struct {
	at          time.Duration
	resetQuota  bool // a forced ResetQuota of every account first
	wantAccount string
	wantWait    campaign.WaitReason
	wantUntil   time.Duration // offset from t0; 0 means the zero time
}

func runClaims(t *testing.T, st *Store, clk *clock.Sim, id int64, steps []claimStep) []campaign.Claim {
	t.Helper()
	var claims []campaign.Claim
	for i, s := range steps {
		clk.Set(at(s.at))
		if s.resetQuota {
			if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
				t.Fatal(err)
			}
		}
		c, err := st.Claim(t.Context(), id, "r1", at(s.at))
		if s.wantWait != "" {
			var we *campaign.WaitError
			if !errors.As(err, &we) {
				t.Fatalf("step %d (+%v): Claim = %s, %v; want wait %s", i, s.at, c.Account.Name, err, s.wantWait)
			}
			want := time.Time{}
			if s.wantUntil != 0 {
				want = at(s.wantUntil)
			}
			if we.Reason != s.wantWait || !we.Until.Equal(want) {
				t.Fatalf("step %d (+%v): wait %s until %v, want %s until %v", i, s.at, we.Reason, we.Until, s.wantWait, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (+%v): %v, want a claim on %s", i, s.at, err, s.wantAccount)
		}
		if c.Account.Name != s.wantAccount {
			t.Fatalf("step %d (+%v): claimed on %s, want %s", i, s.at, c.Account.Name, s.wantAccount)
		}
		if c.Message.State != campaign.Sending || !c.At.Equal(at(s.at)) {
			t.Errorf("step %d: claim %+v", i, c)
		}
		claims = append(claims, c)
	}
	return claims
}

func TestClaimRespectsBucketsAndCaps(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(0.1, 2, 3))
	mustAccount(t, st, "b", campaign.TierNew, limited(0.1, 2, 3))
	c := mustCampaign(t, st, "caps", 20)

	claims := runClaims(t, st, clk, c.ID, []claimStep{
		{at: 0, wantAccount: "a"},
		{at: 0, wantAccount: "b"},
		{at: 0, wantAccount: "a"},
		{at: 0, wantAccount: "b"},
		{at: 0, wantWait: campaign.WaitTokens, wantUntil: 10 * time.Second},
		{at: 9 * time.Second, wantWait: campaign.WaitTokens, wantUntil: 10 * time.Second},
		{at: 10 * time.Second, wantAccount: "a"},
		{at: 10 * time.Second, wantAccount: "b"},
		{at: 10 * time.Second, wantWait: campaign.WaitCapped}, // 3 each: capped, no time helps
		{at: time.Hour, wantWait: campaign.WaitCapped},
		{at: time.Hour, resetQuota: true, wantAccount: "a"},
		{at: time.Hour, wantAccount: "b"},
		{at: time.Hour, wantAccount: "a"},
		{at: time.Hour, wantAccount: "b"},
		{at: time.Hour, wantWait: campaign.WaitTokens, wantUntil: time.Hour + 10*time.Second},
	})
	if len(claims) != 10 {
		t.Fatalf("%d claims, want 10", len(claims))
	}
	for i, cl := range claims {
		if i > 0 && cl.Message.ID <= claims[i-1].Message.ID {
			t.Errorf("claim %d took message %d after %d: not in id order", i, cl.Message.ID, claims[i-1].Message.ID)
		}
		wantEpoch := int64(0)
		if i >= 6 {
			wantEpoch = 1
		}
		if cl.QuotaEpoch != wantEpoch {
			t.Errorf("claim %d epoch %d, want %d", i, cl.QuotaEpoch, wantEpoch)
		}
	}
	if got := claims[0].Message.Params; len(got) != 1 || got[0] != "P0" {
		t.Errorf("params = %q, want [P0]", got)
	}
	for _, name := range []string{"a", "b"} {
		if a := accountByName(t, st, name); a.UsedToday != 2 {
			t.Errorf("%s used %d since the reset, want 2", name, a.UsedToday)
		}
	}
	if n := countRows(t, st, `SELECT count(*) FROM attempts WHERE done_at IS NULL`); n != 10 {
		t.Errorf("%d open attempts, want 10", n)
	}
}

func TestClaimSkipsDisabledAndCappedAccounts(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "zero", campaign.TierActive, campaign.Overrides{DailyCap: ptr(0)})
	mustAccount(t, st, "off", campaign.TierActive, campaign.Overrides{})
	mustAccount(t, st, "slow", campaign.TierNew, limited(0.5, 1, 100))
	if _, err := st.UpdateAccount(t.Context(), "off", AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "skip", 5)
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 0, wantAccount: "slow"},
		{at: time.Second, wantWait: campaign.WaitTokens, wantUntil: 2 * time.Second},
		{at: 2 * time.Second, wantAccount: "slow"},
	})
}

func TestClaimWithoutAccounts(t *testing.T) {
	st := openTest(t, newFakeClock())
	c := mustCampaign(t, st, "lonely", 1)
	_, err := st.Claim(t.Context(), c.ID, "r1", t0)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Fatalf("no accounts: err = %v, want wait no-account", err)
	}
	mustAccount(t, st, "off", campaign.TierNew, campaign.Overrides{})
	if _, err := st.UpdateAccount(t.Context(), "off", AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(t.Context(), c.ID, "r1", t0); !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Fatalf("only a disabled account: err = %v, want wait no-account", err)
	}
	if _, err := st.Claim(t.Context(), 999, "r1", t0); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown campaign: err = %v, want ErrNotFound", err)
	}
}

func TestClaimGlobalBucketLimitsTheSum(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	for _, name := range []string{"a", "b", "c"} {
		mustAccount(t, st, name, campaign.TierActive, limited(1, 5, 100))
	}
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Every(10*time.Second, 2)); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "global", 30)
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 0, wantAccount: "a"},
		{at: 0, wantAccount: "b"},
		{at: 0, wantWait: campaign.WaitGlobal, wantUntil: 10 * time.Second},
		{at: 5 * time.Second, wantWait: campaign.WaitGlobal, wantUntil: 10 * time.Second},
		{at: 10 * time.Second, wantAccount: "a"}, // every bucket refilled: a tie, the first wins
		{at: 10 * time.Second, wantWait: campaign.WaitGlobal, wantUntil: 20 * time.Second},
		{at: 30 * time.Second, wantAccount: "a"},
		{at: 30 * time.Second, wantAccount: "b"},
		{at: 30 * time.Second, wantWait: campaign.WaitGlobal, wantUntil: 40 * time.Second},
	})
	clk.Set(at(35 * time.Second))
	if _, tokens, ok, err := st.GlobalLimit(t.Context()); err != nil || !ok || tokens != 0.5 {
		t.Errorf("global at +35s: %v tokens, on %v, %v; want 0.5", tokens, ok, err)
	}
	// Raising the global rate keeps the half token earned, grants no more.
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Every(time.Second, 2)); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 35 * time.Second, wantWait: campaign.WaitGlobal, wantUntil: 35*time.Second + 500*time.Millisecond},
		{at: 35*time.Second + 500*time.Millisecond, wantAccount: "a"},
	})
	if err := st.SetGlobalLimit(t.Context(), false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 36 * time.Second, wantAccount: "b"}, // a spent at +35.5s
		{at: 36 * time.Second, wantAccount: "c"},
		{at: 36 * time.Second, wantAccount: "a"},
		{at: 36 * time.Second, wantAccount: "b"}, // no global token needed any more
	})
}

type messageRow struct {
	state    string
	wamid    sql.NullString
	next     int64
	attempts int
	retries  int
	errCode  sql.NullInt64
}

func readMessage(t *testing.T, st *Store, id int64) messageRow {
	t.Helper()
	var m messageRow
	err := st.db.QueryRowContext(t.Context(), `SELECT state, wamid, next_attempt_at, attempts, retries, error_code FROM messages WHERE id = ?`, id).
		Scan(&m.state, &m.wamid, &m.next, &m.attempts, &m.retries, &m.errCode)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustClaim(t *testing.T, st *Store, id int64, runner string, now time.Time) campaign.Claim {
	t.Helper()
	c, err := st.Claim(t.Context(), id, runner, now)
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return c
}

func TestRecordRefund(t *testing.T) {
	tests := []struct {
		name        string
		refund      bool
		resetBefore bool // the quota is reset, and another send counted, before the outcome arrives
		wantUsed    int
	}{
		{name: "refund in the same epoch gives the quota back", refund: true, wantUsed: 0},
		{name: "no refund keeps the count", refund: false, wantUsed: 1},
		{name: "refund after a reset does not touch the new day", refund: true, resetBefore: true, wantUsed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			c := mustCampaign(t, st, "refund", 3)
			first := mustClaim(t, st, c.ID, "r1", t0)
			if tt.resetBefore {
				if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
					t.Fatal(err)
				}
				if second := mustClaim(t, st, c.ID, "r1", t0); second.QuotaEpoch != 1 {
					t.Fatalf("second claim epoch %d, want 1", second.QuotaEpoch)
				}
			}
			err := st.Record(t.Context(), first, "r1", campaign.Outcome{
				Kind: campaign.OutcomeRetry, RetryAt: at(time.Minute), ErrorCode: 131056, Error: "pair rate limit", Refund: tt.refund,
			}, at(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if a := accountByName(t, st, "a"); a.UsedToday != tt.wantUsed {
				t.Errorf("used %d, want %d", a.UsedToday, tt.wantUsed)
			}
			clk.Set(at(time.Second))
			want := 15 - float64(1+btoi(tt.resetBefore)) + 0.2
			if a := accountByName(t, st, "a"); math.Abs(a.Tokens-want) > 1e-9 {
				t.Errorf("tokens %v, want %v: a refund must not give the token back", a.Tokens, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRecordRetryWaitsUntilRetryAt(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "retry", 2)

	m1 := mustClaim(t, st, c.ID, "r1", t0)
	if err := st.Record(t.Context(), m1, "r1", campaign.Outcome{
		Kind: campaign.OutcomeRetry, RetryAt: at(30 * time.Second), SpendsRetry: true, ErrorCode: 131000, Error: "something went wrong",
	}, t0); err != nil {
		t.Fatal(err)
	}
	row := readMessage(t, st, m1.Message.ID)
	if row.state != "pending" || row.next != at(30*time.Second).UnixNano() || row.retries != 1 || row.attempts != 1 || row.errCode.Int64 != 131000 {
		t.Fatalf("after retry: %+v", row)
	}

	// The row not waiting goes first.
	m2 := mustClaim(t, st, c.ID, "r1", t0)
	if m2.Message.ID == m1.Message.ID {
		t.Fatalf("claimed the retrying row before its time")
	}
	// While m2 is in flight and m1 waits, the retry time is the answer.
	steps := []claimStep{{at: time.Second, wantWait: campaign.WaitRetry, wantUntil: 30 * time.Second}}
	runClaims(t, st, clk, c.ID, steps)
	if err := st.Record(t.Context(), m2, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}, at(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 29 * time.Second, wantWait: campaign.WaitRetry, wantUntil: 30 * time.Second},
	})
	again := mustClaim(t, st, c.ID, "r1", at(30*time.Second))
	if again.Message.ID != m1.Message.ID || again.Message.Attempts != 2 || again.Message.Retries != 1 {
		t.Fatalf("retry claim = %+v", again.Message)
	}
	// A throttling retry does not spend the retry budget.
	if err := st.Record(t.Context(), again, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(40 * time.Second)}, at(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if row := readMessage(t, st, m1.Message.ID); row.retries != 1 || row.attempts != 2 {
		t.Errorf("after a throttle: %+v, want retries still 1", row)
	}
	var outcomes []string
	rows, err := st.db.QueryContext(t.Context(), `SELECT outcome FROM attempts WHERE message_id = ? ORDER BY id`, m1.Message.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o string
		rows.Scan(&o)
		outcomes = append(outcomes, o)
	}
	rows.Close()
	if len(outcomes) != 2 || outcomes[0] != "retry" || outcomes[1] != "retry" {
		t.Errorf("attempt outcomes %v, want [retry retry]", outcomes)
	}
}

func TestClaimInFlightThenDone(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "done", 2)
	m1 := mustClaim(t, st, c.ID, "r1", t0)
	m2 := mustClaim(t, st, c.ID, "r1", t0)
	runClaims(t, st, clk, c.ID, []claimStep{{at: time.Second, wantWait: campaign.WaitInFlight}})
	if err := st.Record(t.Context(), m1, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(t.Context(), m2, "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(t.Context(), c.ID, "r1", at(2*time.Second)); !errors.Is(err, campaign.ErrDone) {
		t.Fatalf("err = %v, want ErrDone", err)
	}
	counts, _ := st.Counts(t.Context(), c.ID)
	if counts[campaign.Sent] != 1 || counts[campaign.Failed] != 1 {
		t.Errorf("counts %v", counts)
	}

	// Requeueing the failed row makes the campaign claimable again.
	n, err := st.RequeueFailed(t.Context(), c.ID, nil)
	if err != nil || n != 1 {
		t.Fatalf("requeue: %d, %v", n, err)
	}
	if got, _ := st.Campaign(t.Context(), c.ID); got.State != campaign.CampaignRunning {
		t.Errorf("after requeue: campaign %s, want running", got.State)
	}
	if again := mustClaim(t, st, c.ID, "r1", at(time.Hour)); again.Message.ID != m2.Message.ID || again.Message.Retries != 0 {
		t.Errorf("requeued claim = %+v", again.Message)
	}
}

// BUG (claims.go:162-166 with store.go:169-171): nextDue marks the campaign
// finished inside the claim transaction and then returns ErrDone as an
// error, so write rolls the transaction back and the UPDATE is lost. No
// campaign ever becomes 'finished' (cmd/campaign.go:175 is unreachable, and
// Requeue's reopen never has anything to reopen).
func TestClaimErrDoneMarksCampaignFinished(t *testing.T) {
	st := openTest(t, newFakeClock())
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "finish", 1)
	m := mustClaim(t, st, c.ID, "r1", t0)
	if err := st.Record(t.Context(), m, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, now := range []time.Time{at(2 * time.Second), at(time.Hour)} {
		if _, err := st.Claim(t.Context(), c.ID, "r1", now); !errors.Is(err, campaign.ErrDone) {
			t.Fatalf("err = %v, want ErrDone", err)
		}
		got, err := st.Campaign(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The first ErrDone sets the finish time; later ones keep it.
		if got.State != campaign.CampaignFinished || !got.FinishedAt.Equal(at(2*time.Second)) {
			t.Errorf("after ErrDone at +%v: campaign %s, finished at %v; want finished at +2s", now.Sub(t0), got.State, got.FinishedAt)
		}
	}
}

func TestClaimPaused(t *testing.T) {
	st := openTest(t, newFakeClock())
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "pause", 2)
	if err := st.SetCampaignState(t.Context(), c.ID, campaign.CampaignPaused, "429 storm"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(t.Context(), c.ID, "r1", t0); !errors.Is(err, campaign.ErrPaused) {
		t.Fatalf("paused: err = %v, want ErrPaused", err)
	}
	if got, _ := st.Campaign(t.Context(), c.ID); got.PauseReason != "429 storm" {
		t.Errorf("pause reason %q", got.PauseReason)
	}
	if a := accountByName(t, st, "a"); a.UsedToday != 0 || a.Tokens != 15 {
		t.Errorf("a paused claim spent quota or tokens: %+v", a)
	}
	if err := st.SetCampaignState(t.Context(), c.ID, campaign.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, c.ID, "r1", t0)
	if err := st.SetCampaignState(t.Context(), 999, campaign.CampaignPaused, ""); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown campaign: err = %v, want ErrNotFound", err)
	}
}

func TestRecoverOrphans(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := mustCampaign(t, st, "orphans", 4)
	for _, id := range []string{"dead", "live"} {
		if err := st.RegisterRunner(t.Context(), campaign.Runner{ID: id, CampaignID: c.ID, Host: "h", PID: 1, StartedAt: t0, HeartbeatAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	byDead := mustClaim(t, st, c.ID, "dead", t0)
	byLive := mustClaim(t, st, c.ID, "live", t0)
	byGhost := mustClaim(t, st, c.ID, "ghost", t0) // never registered
	other := mustCampaign(t, st, "other", 2)
	mustClaim(t, st, other.ID, "ghost", t0)
	if err := st.Heartbeat(t.Context(), "live", at(time.Minute)); err != nil {
		t.Fatal(err)
	}

	clk.Set(at(2 * time.Minute))
	stale := func(r campaign.Runner) bool { return clk.Now().Sub(r.HeartbeatAt) > 90*time.Second }
	moved, err := st.RecoverOrphans(t.Context(), clk.Now(), stale)
	if err != nil {
		t.Fatal(err)
	}
	// Each campaign's rows are counted as its own.
	if len(moved) != 2 || moved[c.ID] != 2 || moved[other.ID] != 1 {
		t.Errorf("moved %v rows by campaign, want %d: 2 (dead's and ghost's), %d: 1 (ghost's)", moved, c.ID, other.ID)
	}
	for _, tt := range []struct {
		claim campaign.Claim
		want  string
	}{{byDead, "unknown"}, {byLive, "sending"}, {byGhost, "unknown"}} {
		if got := readMessage(t, st, tt.claim.Message.ID).state; got != tt.want {
			t.Errorf("row claimed by %s: %s, want %s", tt.claim.Message.Phone, got, tt.want)
		}
	}
	if n := countRows(t, st, `SELECT count(*) FROM runners WHERE id = 'dead'`); n != 0 {
		t.Errorf("dead runner still registered")
	}
	if n := countRows(t, st, `SELECT count(*) FROM attempts WHERE outcome = 'unknown' AND done_at = ?`, clk.Now().UnixNano()); n != 3 {
		t.Errorf("%d attempts closed as unknown, want 3", n)
	}

	// The dead runner's late answers: a failure or retry no longer applies
	// (the row is not resent blindly), but a wamid is the truth and is kept.
	if err := st.Record(t.Context(), byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(t.Context(), byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 1}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got := readMessage(t, st, byDead.Message.ID); got.state != "unknown" {
		t.Errorf("a late failure changed an unknown row to %s", got.state)
	}
	if err := st.Record(t.Context(), byDead, "dead", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.late"}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got := readMessage(t, st, byDead.Message.ID); got.state != "sent" || got.wamid.String != "wamid.late" {
		t.Errorf("late sent: %+v, want sent with wamid.late", got)
	}

	// Another recovery leaves the live runner alone.
	if moved, err := st.RecoverOrphans(t.Context(), clk.Now(), stale); err != nil || len(moved) != 0 {
		t.Errorf("second recovery moved %v, %v", moved, err)
	}
	n, err := st.RequeueUnknown(t.Context(), c.ID)
	if err != nil || n != 1 {
		t.Errorf("requeue unknown: %d, %v; want the ghost's row", n, err)
	}
	if got := readMessage(t, st, byGhost.Message.ID); got.state != "pending" {
		t.Errorf("requeued row is %s", got.state)
	}
}

// TestRescue: a running engine's rescue turns only its campaign's rows of
// dead runners unknown, unregisters every dead runner, and a runner taken
// for dead learns so from its next heartbeat.
func TestRescue(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c1 := mustCampaign(t, st, "one", 3)
	c2 := mustCampaign(t, st, "two", 3)
	for _, r := range []campaign.Runner{{ID: "dead1", CampaignID: c1.ID}, {ID: "dead2", CampaignID: c2.ID}, {ID: "live", CampaignID: c1.ID}} {
		r.Host, r.PID, r.StartedAt, r.HeartbeatAt = "h", 1, t0, t0
		if err := st.RegisterRunner(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	dead1 := mustClaim(t, st, c1.ID, "dead1", t0)
	dead2 := mustClaim(t, st, c2.ID, "dead2", t0)
	live := mustClaim(t, st, c1.ID, "live", t0)
	clk.Set(at(time.Minute))
	if err := st.Heartbeat(t.Context(), "live", clk.Now()); err != nil {
		t.Fatal(err)
	}
	stale := func(r campaign.Runner) bool { return clk.Now().Sub(r.HeartbeatAt) > 30*time.Second }
	moved, err := st.Rescue(t.Context(), c1.ID, clk.Now(), stale)
	if err != nil || moved != 1 {
		t.Fatalf("rescue moved %d, %v; want dead1's one row", moved, err)
	}
	for _, tt := range []struct {
		claim campaign.Claim
		want  string
	}{{dead1, "unknown"}, {dead2, "sending"}, {live, "sending"}} {
		if got := readMessage(t, st, tt.claim.Message.ID).state; got != tt.want {
			t.Errorf("campaign %d row claimed by %s: %s, want %s", tt.claim.Message.CampaignID, tt.claim.Message.Phone, got, tt.want)
		}
	}
	if n := countRows(t, st, `SELECT count(*) FROM attempts WHERE message_id = ? AND outcome = 'unknown' AND done_at = ?`,
		dead1.Message.ID, clk.Now().UnixNano()); n != 1 {
		t.Errorf("dead1's attempt not closed as unknown")
	}
	if n := countRows(t, st, `SELECT count(*) FROM runners`); n != 1 {
		t.Errorf("%d runners registered, want only the live one", n)
	}
	// campaign 2's row: its runner is gone now, so its own rescue moves it.
	if moved, err := st.Rescue(t.Context(), c2.ID, clk.Now(), stale); err != nil || moved != 1 {
		t.Errorf("rescue of campaign 2 moved %d, %v; want 1", moved, err)
	}
	if err := st.Heartbeat(t.Context(), "dead1", clk.Now()); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("heartbeat of an unregistered runner: %v, want ErrNotFound", err)
	}
	if _, err := st.Rescue(t.Context(), 0, clk.Now(), stale); err == nil {
		t.Error("rescue of campaign 0: no error")
	}
}

// TestClaimFailsSuppressedRows: rows whose number went on the suppression
// list after the import fail as suppressed (code campaign.CodeSuppressed, so
// `campaign retry --code` can select them) in the claim that finds them,
// whatever else the claim returns — before, a claim that found only
// suppressed rows rolled its own update back and the engine spun on them.
func TestClaimFailsSuppressedRows(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows       int
		suppressed []int // row indexes on the list
		max        int
		wantClaim  []int // rows claimed by the one ClaimN
		wantDone   bool
	}{
		{name: "the only row", rows: 1, suppressed: []int{0}, max: 1, wantDone: true},
		{name: "every row", rows: 5, suppressed: []int{0, 1, 2, 3, 4}, max: 2, wantDone: true},
		{name: "a block of 2×max at the head", rows: 6, suppressed: []int{0, 1, 2, 3}, max: 2, wantClaim: []int{4, 5}},
		{name: "mixed in one batch", rows: 4, suppressed: []int{1, 2}, max: 4, wantClaim: []int{0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			st := openTest(t, clk)
			mustAccount(t, st, "a", campaign.TierNew, limited(100, 100, 100))
			c := mustCampaign(t, st, "sup", tc.rows)
			var list []Suppression
			for _, i := range tc.suppressed {
				list = append(list, Suppression{Phone: phone(i), Reason: "STOP"})
			}
			if _, err := st.Suppress(t.Context(), list); err != nil {
				t.Fatal(err)
			}
			cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, tc.max)
			if tc.wantDone {
				if !errors.Is(err, campaign.ErrDone) {
					t.Fatalf("ClaimN = %d claims, %v; want ErrDone", len(cs), err)
				}
			} else if err != nil {
				t.Fatalf("ClaimN: %v", err)
			}
			var got []string
			for _, cl := range cs {
				got = append(got, cl.Message.Phone)
			}
			var want []string
			for _, i := range tc.wantClaim {
				want = append(want, phone(i))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("claimed %v, want %v", got, want)
			}
			if n := countRows(t, st, `SELECT count(*) FROM messages WHERE state = 'failed' AND error_code = ?
				AND error_message = 'suppressed: STOP'`, campaign.CodeSuppressed); n != len(tc.suppressed) {
				t.Errorf("%d rows failed as suppressed, want %d", n, len(tc.suppressed))
			}
			if n := countRows(t, st, `SELECT count(*) FROM attempts`); n != len(tc.wantClaim) {
				t.Errorf("%d attempts logged, want %d (suppressed rows make no attempt)", n, len(tc.wantClaim))
			}
			// retry --code selects them once the number is off the list.
			if n, err := st.RequeueFailed(t.Context(), c.ID, []int{campaign.CodeSuppressed}); err != nil || n != len(tc.suppressed) {
				t.Errorf("RequeueFailed(CodeSuppressed) = %d, %v; want %d", n, err, len(tc.suppressed))
			}
		})
	}
}

// TestClaimSuppressedWhileWaiting: a suppressed row fails even when the
// claim then waits (for tokens here), instead of being found again each time.
func TestClaimSuppressedWhileWaiting(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(0.1, 1, 100))
	c := mustCampaign(t, st, "sup-wait", 3)
	mustClaim(t, st, c.ID, "r1", t0) // the only token
	if _, err := st.Suppress(t.Context(), []Suppression{{Phone: phone(1)}}); err != nil {
		t.Fatal(err)
	}
	_, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 2)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitTokens {
		t.Fatalf("ClaimN = %v, want a wait for tokens", err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM messages WHERE state = 'failed' AND error_code = ?`, campaign.CodeSuppressed); n != 1 {
		t.Errorf("%d rows failed as suppressed, want 1", n)
	}
}
