package storetest

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Claims: a row, a token and a daily-cap unit taken together, within every
// bucket, cap and the global bucket; paused, done and suppressed rows.

func (s suite) claimTests() []sub {
	return []sub{
		{"buckets and caps", s.testClaimRespectsBucketsAndCaps},
		{"skips disabled and capped accounts", s.testClaimSkipsDisabledAndCappedAccounts},
		{"without accounts", s.testClaimWithoutAccounts},
		{"global bucket limits the sum", s.testClaimGlobalBucketLimitsTheSum},
		{"in flight then done", s.testClaimInFlightThenDone},
		{"done marks the campaign finished", s.testClaimErrDoneMarksCampaignFinished},
		{"paused", s.testClaimPaused},
		{"fails suppressed rows", s.testClaimFailsSuppressedRows},
		{"suppressed while waiting", s.testClaimSuppressedWhileWaiting},
		{"two handles at once", s.testClaimConcurrentProcesses},
		{"three handles, batches, one campaign", s.testClaimContention},
		{"outcomes beside claims, two campaigns, caps", s.testOutcomesBesideClaims},
	}
}

// ClaimStep is one claim at a named instant, an offset from T0: either
// an account is charged, or the claim waits for a reason until an instant
// (zero: no known instant).
type ClaimStep struct {
	At          time.Duration
	ResetQuota  bool // a forced ResetQuota of every account first
	WantAccount string
	WantWait    campaign.WaitReason
	WantUntil   time.Duration // offset from T0; 0 means the zero time
}

// RunClaims sets clk to each step's instant and claims one row there with
// claim, holding what it does to the step; it returns the claims made.
func RunClaims(t *testing.T, st driver.Driver, clk *clock.Sim, claim func(now time.Time) (campaign.Claim, error), steps []ClaimStep) []campaign.Claim {
	t.Helper()
	var claims []campaign.Claim
	for i, s := range steps {
		clk.Set(at(s.At))
		if s.ResetQuota {
			if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
				t.Fatal(err)
			}
		}
		c, err := claim(at(s.At))
		if s.WantWait != "" {
			var we *campaign.WaitError
			if !errors.As(err, &we) {
				t.Fatalf("step %d (+%v): claim = %s, %v; want wait %s", i, s.At, c.Account.Name, err, s.WantWait)
			}
			want := time.Time{}
			if s.WantUntil != 0 {
				want = at(s.WantUntil)
			}
			if we.Reason != s.WantWait || !we.Until.Equal(want) {
				t.Fatalf("step %d (+%v): wait %s until %v, want %s until %v", i, s.At, we.Reason, we.Until, s.WantWait, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d (+%v): %v, want a claim on %s", i, s.At, err, s.WantAccount)
		}
		if c.Account.Name != s.WantAccount {
			t.Fatalf("step %d (+%v): claimed on %s, want %s", i, s.At, c.Account.Name, s.WantAccount)
		}
		if c.Message.State != campaign.Sending || !c.At.Equal(at(s.At)) {
			t.Errorf("step %d: claim %+v", i, c)
		}
		claims = append(claims, c)
	}
	return claims
}

// runClaims is RunClaims with the suite's claim by runner r1.
func runClaims(t *testing.T, st driver.Driver, clk *clock.Sim, id int64, steps []ClaimStep) []campaign.Claim {
	t.Helper()
	return RunClaims(t, st, clk, func(now time.Time) (campaign.Claim, error) { return claim(t, st, id, "r1", now) }, steps)
}

func (s suite) testClaimRespectsBucketsAndCaps(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, Limited(0.1, 2, 3))
	MustAccount(t, st, "b", campaign.TierNew, Limited(0.1, 2, 3))
	c := MustCampaign(t, st, "caps", 20)

	claims := runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 0, WantAccount: "a"},
		{At: 0, WantAccount: "b"},
		{At: 0, WantAccount: "a"},
		{At: 0, WantAccount: "b"},
		{At: 0, WantWait: campaign.WaitTokens, WantUntil: 10 * time.Second},
		{At: 9 * time.Second, WantWait: campaign.WaitTokens, WantUntil: 10 * time.Second},
		{At: 10 * time.Second, WantAccount: "a"},
		{At: 10 * time.Second, WantAccount: "b"},
		{At: 10 * time.Second, WantWait: campaign.WaitCapped}, // 3 each: capped, no time helps
		{At: time.Hour, WantWait: campaign.WaitCapped},
		{At: time.Hour, ResetQuota: true, WantAccount: "a"},
		{At: time.Hour, WantAccount: "b"},
		{At: time.Hour, WantAccount: "a"},
		{At: time.Hour, WantAccount: "b"},
		{At: time.Hour, WantWait: campaign.WaitTokens, WantUntil: time.Hour + 10*time.Second},
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
		if a := AccountByName(t, st, name); a.UsedToday != 2 {
			t.Errorf("%s used %d since the reset, want 2", name, a.UsedToday)
		}
	}
	if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE done_at IS NULL`); n != 10 {
		t.Errorf("%d open attempts, want 10", n)
	}
}

func (s suite) testClaimSkipsDisabledAndCappedAccounts(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "zero", campaign.TierActive, campaign.Overrides{DailyCap: ptr(0)})
	MustAccount(t, st, "off", campaign.TierActive, campaign.Overrides{})
	MustAccount(t, st, "slow", campaign.TierNew, Limited(0.5, 1, 100))
	if _, err := st.UpdateAccount(t.Context(), "off", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "skip", 5)
	runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 0, WantAccount: "slow"},
		{At: time.Second, WantWait: campaign.WaitTokens, WantUntil: 2 * time.Second},
		{At: 2 * time.Second, WantAccount: "slow"},
	})
}

func (s suite) testClaimWithoutAccounts(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	c := MustCampaign(t, st, "lonely", 1)
	_, err := claim(t, st, c.ID, "r1", t0)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Fatalf("no accounts: err = %v, want wait no-account", err)
	}
	MustAccount(t, st, "off", campaign.TierNew, campaign.Overrides{})
	if _, err := st.UpdateAccount(t.Context(), "off", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, st, c.ID, "r1", t0); !errors.As(err, &we) || we.Reason != campaign.WaitNoAccount {
		t.Fatalf("only a disabled account: err = %v, want wait no-account", err)
	}
	if _, err := claim(t, st, 999, "r1", t0); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown campaign: err = %v, want ErrNotFound", err)
	}
}

func (s suite) testClaimGlobalBucketLimitsTheSum(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	for _, name := range []string{"a", "b", "c"} {
		MustAccount(t, st, name, campaign.TierActive, Limited(1, 5, 100))
	}
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Every(10*time.Second, 2)); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "global", 30)
	runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 0, WantAccount: "a"},
		{At: 0, WantAccount: "b"},
		{At: 0, WantWait: campaign.WaitGlobal, WantUntil: 10 * time.Second},
		{At: 5 * time.Second, WantWait: campaign.WaitGlobal, WantUntil: 10 * time.Second},
		{At: 10 * time.Second, WantAccount: "a"}, // every bucket refilled: a tie, the first wins
		{At: 10 * time.Second, WantWait: campaign.WaitGlobal, WantUntil: 20 * time.Second},
		{At: 30 * time.Second, WantAccount: "a"},
		{At: 30 * time.Second, WantAccount: "b"},
		{At: 30 * time.Second, WantWait: campaign.WaitGlobal, WantUntil: 40 * time.Second},
	})
	clk.Set(at(35 * time.Second))
	if _, tokens, ok, err := readmodel.New(st).GlobalLimit(t.Context()); err != nil || !ok || tokens != 0.5 {
		t.Errorf("global at +35s: %v tokens, on %v, %v; want 0.5", tokens, ok, err)
	}
	// Raising the global rate keeps the half token earned, grants no more.
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Every(time.Second, 2)); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 35 * time.Second, WantWait: campaign.WaitGlobal, WantUntil: 35*time.Second + 500*time.Millisecond},
		{At: 35*time.Second + 500*time.Millisecond, WantAccount: "a"},
	})
	if err := st.SetGlobalLimit(t.Context(), false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 36 * time.Second, WantAccount: "b"}, // a spent at +35.5s
		{At: 36 * time.Second, WantAccount: "c"},
		{At: 36 * time.Second, WantAccount: "a"},
		{At: 36 * time.Second, WantAccount: "b"}, // no global token needed any more
	})
}

func (s suite) testClaimInFlightThenDone(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "done", 2)
	m1 := mustClaim(t, st, c.ID, "r1", t0)
	m2 := mustClaim(t, st, c.ID, "r1", t0)
	runClaims(t, st, clk, c.ID, []ClaimStep{{At: time.Second, WantWait: campaign.WaitInFlight}})
	if err := record(t, st, m1, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := record(t, st, m2, "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, st, c.ID, "r1", at(2*time.Second)); !errors.Is(err, campaign.ErrDone) {
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

// testClaimErrDoneMarksCampaignFinished: the claim that finds nothing
// left marks the campaign finished and returns ErrDone; the mark must
// outlive the error (SQLite's once rolled back with it, and no campaign
// ever became finished).
func (s suite) testClaimErrDoneMarksCampaignFinished(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "finish", 1)
	m := mustClaim(t, st, c.ID, "r1", t0)
	if err := record(t, st, m, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, now := range []time.Time{at(2 * time.Second), at(time.Hour)} {
		if _, err := claim(t, st, c.ID, "r1", now); !errors.Is(err, campaign.ErrDone) {
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

func (s suite) testClaimPaused(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "pause", 2)
	if err := s.setCampaignState(t, st, c.ID, campaign.CampaignPaused, "429 storm"); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, st, c.ID, "r1", t0); !errors.Is(err, campaign.ErrPaused) {
		t.Fatalf("paused: err = %v, want ErrPaused", err)
	}
	if got, _ := st.Campaign(t.Context(), c.ID); got.PauseReason != "429 storm" {
		t.Errorf("pause reason %q", got.PauseReason)
	}
	if a := AccountByName(t, st, "a"); a.UsedToday != 0 || a.Tokens != 15 {
		t.Errorf("a paused claim spent quota or tokens: %+v", a)
	}
	if err := s.setCampaignState(t, st, c.ID, campaign.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, c.ID, "r1", t0)
	if err := s.setCampaignState(t, st, 999, campaign.CampaignPaused, ""); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown campaign: err = %v, want ErrNotFound", err)
	}
}

// testClaimFailsSuppressedRows: rows whose number went on the suppression
// list after the import fail as suppressed (code campaign.CodeSuppressed, so
// `campaign retry --code` can select them) in the claim that finds them,
// whatever else the claim returns — before, a claim that found only
// suppressed rows rolled its own update back and the engine spun on them.
func (s suite) testClaimFailsSuppressedRows(t *testing.T) {
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
			st := s.openTest(t, clk)
			MustAccount(t, st, "a", campaign.TierNew, Limited(100, 100, 100))
			c := MustCampaign(t, st, "sup", tc.rows)
			var list []campaign.Suppression
			for _, i := range tc.suppressed {
				list = append(list, campaign.Suppression{Phone: Phone(i), Reason: "STOP"})
			}
			if _, err := st.Suppress(t.Context(), list); err != nil {
				t.Fatal(err)
			}
			cs, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", t0, tc.max)
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
				want = append(want, Phone(i))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("claimed %v, want %v", got, want)
			}
			if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'failed' AND error_code = ?
				AND error_message = 'suppressed: STOP'`, campaign.CodeSuppressed); n != len(tc.suppressed) {
				t.Errorf("%d rows failed as suppressed, want %d", n, len(tc.suppressed))
			}
			if n := CountRows(t, st, `SELECT count(*) FROM attempts`); n != len(tc.wantClaim) {
				t.Errorf("%d attempts logged, want %d (suppressed rows make no attempt)", n, len(tc.wantClaim))
			}
			// retry --code selects them once the number is off the list.
			if n, err := st.RequeueFailed(t.Context(), c.ID, []int{campaign.CodeSuppressed}); err != nil || n != len(tc.suppressed) {
				t.Errorf("RequeueFailed(CodeSuppressed) = %d, %v; want %d", n, err, len(tc.suppressed))
			}
		})
	}
}

// testClaimSuppressedWhileWaiting: a suppressed row fails even when the
// claim then waits (for tokens here), instead of being found again each time.
func (s suite) testClaimSuppressedWhileWaiting(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, Limited(0.1, 1, 100))
	c := MustCampaign(t, st, "sup-wait", 3)
	mustClaim(t, st, c.ID, "r1", t0) // the only token
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(1)}}); err != nil {
		t.Fatal(err)
	}
	_, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", t0, 2)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitTokens {
		t.Fatalf("ClaimN = %v, want a wait for tokens", err)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'failed' AND error_code = ?`, campaign.CodeSuppressed); n != 1 {
		t.Errorf("%d rows failed as suppressed, want 1", n)
	}
}

// testClaimConcurrentProcesses runs two handles on one database, as two
// wasend processes would, with 8 goroutines claiming from one campaign on a shared
// fake clock. Whatever the interleaving, no message is claimed twice and no
// account (nor the global bucket) spends more than its burst plus its rate
// over the elapsed time, or more than its daily cap.
func (s suite) testClaimConcurrentProcesses(t *testing.T) {
	tests := []struct {
		name   string
		global *ratelimit.Limit
	}{
		{name: "account buckets"},
		{name: "with a global bucket", global: &ratelimit.Limit{Rate: 1.5, Burst: 2}},
	}
	limits := map[string]campaign.Limits{
		"a": {Rate: 2, Burst: 3, DailyCap: 15},
		"b": {Rate: 1, Burst: 2, DailyCap: 1000},
		"c": {Rate: 0.5, Burst: 4, DailyCap: 1000},
	}
	const messages, workers = 80, 8
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			db := s.h.NewDB(t)
			stores := []driver.Driver{s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)}
			for _, name := range []string{"a", "b", "c"} {
				l := limits[name]
				MustAccount(t, stores[0], name, campaign.TierNew, Limited(l.Rate, l.Burst, l.DailyCap))
			}
			if tt.global != nil {
				if err := stores[1].SetGlobalLimit(t.Context(), true, *tt.global); err != nil {
					t.Fatal(err)
				}
			}
			c := MustCampaign(t, stores[1], "race", messages)

			var (
				claimed claimRegister
				wg      sync.WaitGroup
			)
			for w := range workers {
				st, runner := stores[w%2], fmt.Sprint("r", w)
				wg.Go(func() {
					for range 20000 { // a bound, so a livelock fails instead of hanging
						now := clk.Now()
						cl, err := claim(t, st, c.ID, runner, now)
						var we *campaign.WaitError
						switch {
						case err == nil:
							claimed.add(runner, cl)
							// Answered at the claim's instant: a claim made with
							// a stale clock is made at its buckets' stamp, and
							// no answer comes before its request.
							if err := record(t, st, cl, runner, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}, cl.At); err != nil {
								t.Error(err)
								return
							}
						case errors.Is(err, campaign.ErrDone):
							return
						case errors.As(err, &we):
							switch we.Reason {
							case campaign.WaitTokens, campaign.WaitGlobal:
								// Move time on by at most a quarter second, so
								// several goroutines race for each refill.
								clk.AdvanceTo(minTime(we.Until, now.Add(250*time.Millisecond)))
							case campaign.WaitInFlight:
								// Another goroutine holds the last rows.
							default:
								t.Errorf("%s: unexpected wait %v", runner, we)
								return
							}
						default:
							t.Errorf("%s: %v", runner, err)
							return
						}
					}
					t.Errorf("%s: no end after 20000 claims", runner)
				})
			}
			wg.Wait()

			st := stores[0]
			claimed.check(t, st, messages)

			// The attempts table in commit order gives each account's spends.
			// A token taken with a stale clock is booked at the bucket's own
			// time (its At never moves back), so the bound is checked on
			// effective times: the running maximum of claimed_at.
			spends := map[string][]time.Time{}
			var all []time.Time
			rows, err := checked(st).QueryContext(t.Context(), `SELECT a.name, t.claimed_at FROM attempts t JOIN accounts a ON a.id = t.account_id ORDER BY t.id`)
			if err != nil {
				t.Fatal(err)
			}
			last := map[string]int64{}
			var lastAll int64
			for rows.Next() {
				var name string
				var ns int64
				if err := rows.Scan(&name, &ns); err != nil {
					t.Fatal(err)
				}
				last[name] = max(last[name], ns)
				lastAll = max(lastAll, ns)
				spends[name] = append(spends[name], time.Unix(0, last[name]))
				all = append(all, time.Unix(0, lastAll))
			}
			rows.Close()
			elapsed := clk.Now().Sub(t0)
			t.Logf("elapsed %v on the fake clock; spends a=%d b=%d c=%d", elapsed, len(spends["a"]), len(spends["b"]), len(spends["c"]))
			for name, l := range limits {
				checkWindows(t, name, spends[name], ratelimit.Limit{Rate: l.Rate, Burst: l.Burst})
				if n := len(spends[name]); n > l.DailyCap {
					t.Errorf("%s: %d sends, daily cap %d", name, n, l.DailyCap)
				}
				if n, bound := float64(len(spends[name])), float64(l.Burst)+l.Rate*elapsed.Seconds(); n > bound+1e-6 {
					t.Errorf("%s: %v sends in %v, bound %v", name, n, elapsed, bound)
				}
			}
			if a := AccountByName(t, st, "a"); a.UsedToday != len(spends["a"]) || a.UsedToday != limits["a"].DailyCap {
				t.Errorf("a: used %d, spent %d; want the cap %d reached", a.UsedToday, len(spends["a"]), limits["a"].DailyCap)
			}
			if tt.global != nil {
				sort.Slice(all, func(i, j int) bool { return all[i].Before(all[j]) })
				checkWindows(t, "global", all, *tt.global)
			}
		})
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// checkWindows fails when more than burst + rate·(b−a) spends fall in some
// window [a, b] of the sorted instants.
func checkWindows(t *testing.T, name string, spends []time.Time, l ratelimit.Limit) {
	t.Helper()
	for i := range spends {
		for j := i; j < len(spends); j++ {
			n := float64(j - i + 1)
			if bound := float64(l.Burst) + l.Rate*spends[j].Sub(spends[i]).Seconds() + 1e-6; n > bound {
				t.Errorf("%s: %v spends in [+%v, +%v], bound %v", name, n, spends[i].Sub(t0), spends[j].Sub(t0), bound)
				return
			}
		}
	}
}

// claimRegister is who claimed each message, written by goroutines racing
// to claim from one campaign on several handles.
type claimRegister struct {
	mu      sync.Mutex
	claimed map[int64]string // message → runner
	dupes   []string
}

// add registers cs as claimed by runner.
func (r *claimRegister) add(runner string, cs ...campaign.Claim) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed == nil {
		r.claimed = map[int64]string{}
	}
	for _, cl := range cs {
		if prev, ok := r.claimed[cl.Message.ID]; ok {
			r.dupes = append(r.dupes, fmt.Sprintf("message %d by %s and %s", cl.Message.ID, prev, runner))
		}
		r.claimed[cl.Message.ID] = runner
	}
}

// check fails t unless each of the campaign's messages (all st's) was
// claimed once, requested once and is sent with its wamid ("wamid.<id>"),
// once the racing goroutines are done.
func (r *claimRegister) check(t *testing.T, st driver.Driver, messages int) {
	t.Helper()
	for _, d := range r.dupes {
		t.Errorf("claimed twice: %s", d)
	}
	if len(r.claimed) != messages {
		t.Errorf("%d messages claimed, want %d", len(r.claimed), messages)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM attempts`); n != messages {
		t.Errorf("%d attempts, want %d: some message was claimed more than once", n, messages)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sent' AND wamid = 'wamid.' || id`); n != messages {
		t.Errorf("%d messages sent with their wamid, want %d", n, messages)
	}
}
