package storetest

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// Outcomes: sent, retry with its backoff, failed, unknown; refunds give the
// daily cap back, never the token.

func (s suite) recordTests() []sub {
	return []sub{
		{"refund", s.testRecordRefund},
		{"retry waits until its time", s.testRecordRetryWaitsUntilRetryAt},
		{"record and claim in one transaction", s.testRecordAndClaimN},
		{"each outcome moves its row", s.testRecordOutcomes},
		{"a held answer is sent, its delivery held", s.testRecordHeld},
		{"what an answer means beyond its row", s.testRecordEffects},
		{"--max-held and --ttl are kept; held sends stop the claim", s.testSetSending},
	}
}

type messageRow struct {
	state    string
	wamid    sql.NullString
	next     int64
	attempts int
	retries  int
	errCode  sql.NullInt64
}

func readMessage(t *testing.T, st driver.Driver, id int64) messageRow {
	t.Helper()
	var m messageRow
	err := checked(st).QueryRowContext(t.Context(), `SELECT state, wamid, next_attempt_at, attempts, retries, error_code FROM messages WHERE id = ?`, id).
		Scan(&m.state, &m.wamid, &m.next, &m.attempts, &m.retries, &m.errCode)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (s suite) testRecordRefund(t *testing.T) {
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
			st := s.openTest(t, clk)
			MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			c := MustCampaign(t, st, "refund", 3)
			first := mustClaim(t, st, c.ID, "r1", t0)
			if tt.resetBefore {
				if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
					t.Fatal(err)
				}
				if second := mustClaim(t, st, c.ID, "r1", t0); second.QuotaEpoch != 1 {
					t.Fatalf("second claim epoch %d, want 1", second.QuotaEpoch)
				}
			}
			err := record(t, st, first, "r1", campaign.Outcome{
				Kind: campaign.OutcomeRetry, RetryAt: at(time.Minute), ErrorCode: 131056, Error: "pair rate limit", Refund: tt.refund,
			}, at(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if a := AccountByName(t, st, "a"); a.UsedToday != tt.wantUsed {
				t.Errorf("used %d, want %d", a.UsedToday, tt.wantUsed)
			}
			clk.Set(at(time.Second))
			want := 15 - float64(1+btoi(tt.resetBefore)) + 0.2
			if a := AccountByName(t, st, "a"); math.Abs(a.Tokens-want) > 1e-9 {
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

func (s suite) testRecordRetryWaitsUntilRetryAt(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "retry", 2)

	m1 := mustClaim(t, st, c.ID, "r1", t0)
	if err := record(t, st, m1, "r1", campaign.Outcome{
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
	steps := []ClaimStep{{At: time.Second, WantWait: campaign.WaitRetry, WantUntil: 30 * time.Second}}
	runClaims(t, st, clk, c.ID, steps)
	if err := record(t, st, m2, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.2"}, at(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	runClaims(t, st, clk, c.ID, []ClaimStep{
		{At: 29 * time.Second, WantWait: campaign.WaitRetry, WantUntil: 30 * time.Second},
	})
	again := mustClaim(t, st, c.ID, "r1", at(30*time.Second))
	if again.Message.ID != m1.Message.ID || again.Message.Attempts != 2 || again.Message.Retries != 1 {
		t.Fatalf("retry claim = %+v", again.Message)
	}
	// A throttling retry does not spend the retry budget.
	if err := record(t, st, again, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(40 * time.Second)}, at(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if row := readMessage(t, st, m1.Message.ID); row.retries != 1 || row.attempts != 2 {
		t.Errorf("after a throttle: %+v, want retries still 1", row)
	}
	var outcomes []string
	rows, err := checked(st).QueryContext(t.Context(), `SELECT outcome FROM attempts WHERE message_id = ? ORDER BY id`, m1.Message.ID)
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

// RecordAndClaimN records and claims in one transaction: the outcomes are
// stored as RecordAll stores them, the claims are ClaimN's, and a claim
// that finds nothing to send (or a paused campaign) keeps the outcomes and
// says why, with whatever it tried to write undone.
func (s suite) testRecordAndClaimN(t *testing.T) {
	sent := func(cs []campaign.Claim) []campaign.Result {
		var rs []campaign.Result
		for i, cl := range cs {
			rs = append(rs, campaign.Result{Claim: cl, At: t0,
				Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.%d", i), Class: "ok"}})
		}
		return rs
	}
	tests := []struct {
		name      string
		rows, max int
		tokens    int // the account's burst: tokens at the start
		pause     bool
		wantNext  int
		wantClaim error
	}{
		{"claims the next rows", 10, 4, 100, false, 4, nil},
		{"fewer rows left than asked", 6, 4, 100, false, 2, nil},
		{"no rows left: done", 4, 4, 100, false, 0, campaign.ErrDone},
		{"no tokens left: wait", 10, 4, 4, false, 0, &campaign.WaitError{}},
		{"paused meanwhile", 10, 4, 100, true, 0, campaign.ErrPaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := s.openTest(t, newFakeClock())
			if err := st.SetTier(t.Context(), campaign.TierNew, campaign.Limits{Rate: 0.001, Burst: tt.tokens, DailyCap: 1e9}); err != nil {
				t.Fatal(err)
			}
			MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
			c := MustCampaign(t, st, "c", tt.rows)
			first, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", t0, 4)
			if err != nil {
				t.Fatal(err)
			}
			if tt.pause {
				if err := s.setCampaignState(t, st, c.ID, campaign.CampaignPaused, "test"); err != nil {
					t.Fatal(err)
				}
			}
			next, claimErr, err := ledger(st).RecordAndClaimN(t.Context(), "r1", sent(first), c.ID, t0, tt.max, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(next) != tt.wantNext {
				t.Errorf("claimed %d, want %d", len(next), tt.wantNext)
			}
			switch want := tt.wantClaim.(type) {
			case nil:
				if claimErr != nil {
					t.Errorf("claimErr %v, want none", claimErr)
				}
			case *campaign.WaitError:
				if !errors.As(claimErr, &want) || want.Reason != campaign.WaitTokens {
					t.Errorf("claimErr %v, want a wait for tokens", claimErr)
				}
			default:
				if !errors.Is(claimErr, want) {
					t.Errorf("claimErr %v, want %v", claimErr, want)
				}
			}
			if got := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sent'`); got != 4 {
				t.Errorf("%d rows sent, want the 4 recorded", got)
			}
			if got := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sending'`); got != tt.wantNext {
				t.Errorf("%d rows sending, want the %d claimed", got, tt.wantNext)
			}
			if got := CountRows(t, st, `SELECT count(*) FROM attempts`); got != 4+tt.wantNext {
				t.Errorf("%d attempts, want %d", got, 4+tt.wantNext)
			}
			for _, cl := range next {
				if cl.AttemptID == 0 || cl.Message.State != campaign.Sending {
					t.Errorf("claim %+v: want an attempt, sending", cl)
				}
			}
		})
	}
}

// testRecordOutcomes: each kind of outcome moves a claimed row where it
// belongs, and the kept counts follow: sent with its wamid, a retry back to
// pending at its time (spending a retry only when told), failed with its
// code, unknown never claimed again.
func (s suite) testRecordOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		outcome     campaign.Outcome
		wantState   campaign.State
		wantWAMID   string
		wantNext    time.Time
		wantRetries int
		wantCode    int64
	}{
		{name: "sent", outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1", Class: "ok"},
			wantState: campaign.Sent, wantWAMID: "wamid.1"},
		{name: "retry spending one", outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(time.Minute), SpendsRetry: true, ErrorCode: 131000},
			wantState: campaign.Pending, wantNext: at(time.Minute), wantRetries: 1, wantCode: 131000},
		{name: "retry after a throttle", outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: at(time.Minute)},
			wantState: campaign.Pending, wantNext: at(time.Minute)},
		{name: "failed", outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"},
			wantState: campaign.Failed, wantCode: 131026},
		{name: "unknown", outcome: campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "timeout"},
			wantState: campaign.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			st := s.openTest(t, clk)
			MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			c := MustCampaign(t, st, "outcome", 1)
			cl := mustClaim(t, st, c.ID, "r1", t0)
			if err := record(t, st, cl, "r1", tt.outcome, at(time.Second)); err != nil {
				t.Fatal(err)
			}
			row := readMessage(t, st, cl.Message.ID)
			if row.state != string(tt.wantState) || row.wamid.String != tt.wantWAMID || row.retries != tt.wantRetries ||
				row.errCode.Int64 != tt.wantCode || row.attempts != 1 {
				t.Errorf("row %+v; want %s, wamid %q, %d retries, code %d, 1 attempt", row, tt.wantState, tt.wantWAMID, tt.wantRetries, tt.wantCode)
			}
			if !tt.wantNext.IsZero() && row.next != tt.wantNext.UnixNano() {
				t.Errorf("next attempt at %v, want %v", time.Unix(0, row.next).UTC(), tt.wantNext)
			}
			if n, err := st.Counts(t.Context(), c.ID); err != nil || n[tt.wantState] != 1 || n.Total() != 1 {
				t.Errorf("counts %v, %v; want the row %s", n, err, tt.wantState)
			}
			// Only a retry's row is claimed again, and only at its time.
			clk.Set(at(time.Hour))
			again, err := claim(t, st, c.ID, "r1", at(time.Hour))
			if claimed := err == nil && again.Message.ID == cl.Message.ID; claimed != (tt.wantState == campaign.Pending) {
				t.Errorf("claim after the outcome: %+v, %v", again.Message, err)
			}
		})
	}
}

// testRecordHeld: an acceptance whose answer said
// held_for_quality_assessment (campaign.MoveRecordHeld) is sent — it has
// its wamid and is never claimed again — with its delivery held and
// counted held, not reported, whether it comes alone or in a batch of
// plain acceptances (the bulk path) and whether its claim carries its
// attempt or not.
func (s suite) testRecordHeld(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "held", 4)
	cs, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", t0, 4)
	if err != nil || len(cs) != 4 {
		t.Fatalf("claim 4: %d, %v", len(cs), err)
	}
	held := map[int64]bool{cs[1].Message.ID: true, cs[2].Message.ID: true}
	cs[2].AttemptID = 0 // the attempt found by its row, as a claim without one is
	var rs []campaign.Result
	for i, cl := range cs[:3] {
		rs = append(rs, campaign.Result{Claim: cl, At: at(time.Second), Outcome: campaign.Outcome{Kind: campaign.OutcomeSent,
			WAMID: fmt.Sprintf("wamid.%d", i), Class: "ok", Held: held[cl.Message.ID]}})
	}
	if err := st.RecordAll(t.Context(), "r1", rs); err != nil {
		t.Fatal(err)
	}
	if err := record(t, st, cs[3], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.3", Class: "ok", Held: true},
		at(time.Second)); err != nil {
		t.Fatal(err)
	}
	held[cs[3].Message.ID] = true
	for i, cl := range cs {
		row, d := readMessage(t, st, cl.Message.ID), deliveryOf(t, st, cl.Message.ID)
		want := campaign.Delivery("")
		if held[cl.Message.ID] {
			want = campaign.DeliveryHeld
		}
		if row.state != string(campaign.Sent) || row.wamid.String != fmt.Sprintf("wamid.%d", i) || d != want {
			t.Errorf("row %d: %+v, delivery %q; want sent with wamid.%d, delivery %q", i, row, d, i, want)
		}
	}
	if got := CountRows(t, st, `SELECT count(*) FROM attempts WHERE outcome = 'sent' AND done_at = ?`, at(time.Second).UnixNano()); got != 4 {
		t.Errorf("%d attempts closed sent, want 4", got)
	}
	if got := CountRows(t, st, `SELECT coalesce(sum(held), 0) FROM delivery_counts WHERE campaign_id = ?`, c.ID); got != 3 {
		t.Errorf("%d counted held, want 3", got)
	}
	if got := CountRows(t, st, `SELECT coalesce(sum(reported), 0) FROM delivery_counts WHERE campaign_id = ?`, c.ID); got != 0 {
		t.Errorf("%d counted reported, want none: no status came", got)
	}
	if n, err := st.Counts(t.Context(), c.ID); err != nil || n[campaign.Sent] != 4 {
		t.Errorf("counts %v, %v; want 4 sent", n, err)
	}
	if _, err := claim(t, st, c.ID, "r1", at(time.Hour)); !errors.Is(err, campaign.ErrDone) {
		t.Errorf("claim after: %v, want done (a held send is never sent again)", err)
	}
}

// testRecordEffects: what an answer says about its account, its campaign
// and its number is kept with the row's outcome — the error noted, a rest
// for the account (or every account, for the app's limit), a lower rate,
// a restriction, the account dropped from the campaign, the campaign
// paused, the number suppressed, a shared claim's refund queued.
func (s suite) testRecordEffects(t *testing.T) {
	const minute = time.Minute
	retry := func(o campaign.Outcome) campaign.Outcome {
		o.Kind, o.RetryAt = campaign.OutcomeRetry, at(time.Hour)
		return o
	}
	tests := []struct {
		name    string
		outcome campaign.Outcome
		shared  bool
		check   func(t *testing.T, st driver.Driver, c campaign.Campaign, cl campaign.Claim)
	}{
		{"error noted, number suppressed", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131050, Error: "opted out",
			Suppress: true}, false, func(t *testing.T, st driver.Driver, c campaign.Campaign, cl campaign.Claim) {
			if a := AccountByName(t, st, "a"); a.LastErrorCode != 131050 {
				t.Errorf("last error %d, want 131050", a.LastErrorCode)
			}
			if got := CountRows(t, st, `SELECT count(*) FROM suppressions WHERE phone = ? AND reason = ?`, cl.Message.Phone,
				fmt.Sprintf("error 131050 in campaign %d", c.ID)); got != 1 {
				t.Errorf("%d suppressions of %s, want 1", got, cl.Message.Phone)
			}
		}},
		{"one account rests, at a lower rate", retry(campaign.Outcome{ErrorCode: 130429, Throttle: &campaign.Throttle{Cooldown: minute},
			RateFactor: 0.5}), false, func(t *testing.T, st driver.Driver, _ campaign.Campaign, _ campaign.Claim) {
			a, b := AccountByName(t, st, "a"), AccountByName(t, st, "b")
			if !a.CooldownUntil.Equal(at(time.Second+minute)) || a.RateFactor != 0.5 {
				t.Errorf("a: cool-down until %v, factor %v; want %v, 0.5", a.CooldownUntil, a.RateFactor, at(time.Second+minute))
			}
			if !b.CooldownUntil.IsZero() || b.RateFactor != 1 && b.RateFactor != 0 {
				t.Errorf("b: cool-down until %v, factor %v; want no rest, its rate", b.CooldownUntil, b.RateFactor)
			}
		}},
		{"the app's limit rests every account", retry(campaign.Outcome{ErrorCode: 4, Throttle: &campaign.Throttle{Cooldown: minute, App: true}}),
			false, func(t *testing.T, st driver.Driver, _ campaign.Campaign, _ campaign.Claim) {
				for _, name := range []string{"a", "b"} {
					if a := AccountByName(t, st, name); !a.CooldownUntil.Equal(at(time.Second + minute)) {
						t.Errorf("%s: cool-down until %v, want %v", name, a.CooldownUntil, at(time.Second+minute))
					}
				}
			}},
		{"restricted, dropped from the campaign, which pauses", retry(campaign.Outcome{ErrorCode: 131048, Error: "spam rate limit",
			Restrict: time.Hour, DropAccount: true, Pause: "no sender left"}), false,
			func(t *testing.T, st driver.Driver, c campaign.Campaign, _ campaign.Claim) {
				if a := AccountByName(t, st, "a"); !a.CooldownUntil.Equal(at(time.Second+time.Hour)) || a.Restriction != "spam rate limit" {
					t.Errorf("a: cool-down until %v, restriction %q; want %v, the error", a.CooldownUntil, a.Restriction, at(time.Second+time.Hour))
				}
				if got := CountRows(t, st, `SELECT count(*) FROM campaign_accounts WHERE campaign_id = ? AND account_id =
					(SELECT id FROM accounts WHERE name = 'a') AND error_code = 131048`, c.ID); got != 1 {
					t.Errorf("%d drops of a, want 1", got)
				}
				if got, err := st.Campaign(t.Context(), c.ID); err != nil || got.State != campaign.CampaignPaused || got.PauseReason != "no sender left" {
					t.Errorf("campaign %s (%q), %v; want paused for the answer's reason", got.State, got.PauseReason, err)
				}
			}},
		{"a shared claim's refund is queued", retry(campaign.Outcome{ErrorCode: 131056, Refund: true}), true,
			func(t *testing.T, st driver.Driver, _ campaign.Campaign, cl campaign.Claim) {
				if got := CountRows(t, st, `SELECT count(*) FROM gate_refunds WHERE claim = ? AND portfolio = 'p' AND day = '2026-01-01'`,
					cl.Shared.ID); got != 1 {
					t.Errorf("%d refunds queued, want 1", got)
				}
				if a := AccountByName(t, st, "a"); a.UsedToday != 0 {
					t.Errorf("a used %d today, want the refund given back", a.UsedToday)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := s.openTest(t, newFakeClock())
			MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
			MustAccount(t, st, "b", campaign.TierActive, campaign.Overrides{})
			c := MustCampaign(t, st, "effects", 1)
			cl := mustClaim(t, st, c.ID, "r1", t0)
			if cl.Account.Name != "a" {
				t.Fatalf("claimed through %s, want a (the first account)", cl.Account.Name)
			}
			if tt.shared {
				cl.Shared = &campaign.SharedClaim{Portfolio: "p", ID: fmt.Sprintf("h1/%d/1", cl.Message.ID), Account: "pn-a", Day: "2026-01-01"}
			}
			if err := record(t, st, cl, "r1", tt.outcome, at(time.Second)); err != nil {
				t.Fatal(err)
			}
			tt.check(t, st, c, cl)
		})
	}
}

// testSetSending: a run's --max-held and --ttl are kept with its campaign
// (a later run's --ttl 0 keeps the one kept, its --max-held is its own),
// a campaign with --max-held of its sends held waits (campaign.WaitHeld)
// until they settle, and --max-held 0 never stops it.
func (s suite) testSetSending(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "held", 4)
	ctx := t.Context()
	kept := func(wantMax int, wantTTL time.Duration) {
		t.Helper()
		var maxHeld, ttl int64
		if err := checked(st).QueryRowContext(ctx, `SELECT max_held, ttl FROM campaigns WHERE id = ?`, c.ID).Scan(&maxHeld, &ttl); err != nil {
			t.Fatal(err)
		}
		if maxHeld != int64(wantMax) || time.Duration(ttl)*time.Second != wantTTL {
			t.Errorf("kept --max-held %d, --ttl %ds; want %d, %v", maxHeld, ttl, wantMax, wantTTL)
		}
	}
	for _, step := range []struct {
		maxHeld     int
		ttl, wantIn time.Duration
		wantMax     int
	}{
		{campaign.DefaultMaxHeld, 0, 0, campaign.DefaultMaxHeld},
		{5, time.Hour, time.Hour, 5},
		{2, 0, time.Hour, 2}, // a resumed run: the TTL kept
		{-1, 0, time.Hour, 0},
		{2, 90 * time.Minute, 90 * time.Minute, 2},
	} {
		got, err := st.SetSending(ctx, c.ID, step.maxHeld, step.ttl)
		if err != nil || got != step.wantIn {
			t.Fatalf("SetSending(%d, %v) = %v, %v; want the TTL in force %v", step.maxHeld, step.ttl, got, err, step.wantIn)
		}
		kept(step.wantMax, step.wantIn)
	}
	if _, err := st.SetSending(ctx, c.ID+100, 5, 0); err == nil {
		t.Error("SetSending of a campaign that does not exist: no error")
	}
	for i := range 2 {
		cl := mustClaim(t, st, c.ID, "r1", t0)
		if err := record(t, st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprintf("wamid.%d", i), Class: "ok",
			Held: true}, t0); err != nil {
			t.Fatal(err)
		}
	}
	var we *campaign.WaitError
	if _, err := claim(t, st, c.ID, "r1", t0); !errors.As(err, &we) || we.Reason != campaign.WaitHeld {
		t.Errorf("claim with 2 held at --max-held 2: %v; want a wait for held sends", err)
	}
	if _, err := st.SetSending(ctx, c.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, st, c.ID, "r1", t0); err != nil {
		t.Errorf("claim with 2 held at --max-held 0: %v; want a claim", err)
	}
}
