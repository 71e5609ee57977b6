package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/store/driver"
)

// Leases and fences (issue 30): a claimed row is leased to its runner
// until a deadline its heartbeats extend, and every write after the claim
// carries the claim's fence. The time is the simulated clock's: no test
// waits for a lease.

func (s suite) leaseTests() []sub {
	return []sub{
		{"an expired lease: pending if the request never started, else unknown", s.testLeaseExpiry},
		{"a stale runner's writes are refused by the fence", s.testFenceRefusesStaleRunner},
		{"a rescuer races late completions and starts", s.testRescuerRacesLateCompletion},
		{"heartbeats keep a slow runner's rows", s.testHeartbeatsKeepRows},
		{"a heartbeat extends only the leases near their end", s.testHeartbeatExtendsNearEnd},
		{"claim contention: one holder at a time, fences increasing", s.testLeaseContention},
		{"answers dated before the rescue keep the rescue's attempts", s.testLateAnswersBeforeRescue},
		{"a lapsed claim takes its contact-log entry back", s.testLapseUnlogsContact},
		{"a lapsed claim under shared limits queues the gate's refund", s.testLapseQueuesGateRefund},
		{"claims along marked in their transaction: put back pending, unknown at a lapse", s.testStartedAlong},
	}
}

// noneDead: only the leases decide.
func noneDead(campaign.Runner) bool { return false }

// beat heartbeats runner every 10 s from since to until (inclusive), as an
// engine beating every 2 s would, less often.
func beat(t *testing.T, st driver.Driver, runner string, since, until time.Duration) {
	t.Helper()
	for d := since; d <= until; d += 10 * time.Second {
		if err := st.Heartbeat(t.Context(), runner, at(d)); err != nil {
			t.Fatal(err)
		}
	}
}

// startedAndIdle opens a store with account a and a campaign of two rows
// that runner r claimed at t0: started, whose request started, and idle,
// claimed, its request never made.
func (s suite) startedAndIdle(t *testing.T, name string) (st driver.Driver, clk *clock.Sim, c campaign.Campaign, started, idle campaign.Claim) {
	t.Helper()
	clk = newFakeClock()
	st = s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c = MustCampaign(t, st, name, 2)
	registerRunner(t, st, "r", c.ID, t0)
	started = mustClaim(t, st, c.ID, "r", t0)
	idle = mustClaim(t, st, c.ID, "r", t0)
	mustStart(t, st, "r", t0, started)
	return st, clk, c, started, idle
}

func (s suite) testLeaseExpiry(t *testing.T) {
	st, clk, c, started, idle := s.startedAndIdle(t, "leases")
	if used := AccountByName(t, st, "a").UsedToday; used != 2 {
		t.Fatalf("%d sends counted after two claims", used)
	}

	// A moment before the deadline nothing moves; at it, both leases end.
	if moved, err := st.Rescue(t.Context(), c.ID, at(campaign.LeaseTerm-time.Millisecond), noneDead); err != nil || moved != 0 {
		t.Fatalf("rescue before the deadline moved %d, %v", moved, err)
	}
	for _, cl := range []campaign.Claim{started, idle} {
		if got := readMessage(t, st, cl.Message.ID).state; got != "sending" {
			t.Fatalf("row %d is %s before its lease ran out", cl.Message.ID, got)
		}
	}
	clk.Set(at(campaign.LeaseTerm))
	moved, err := st.Rescue(t.Context(), c.ID, clk.Now(), noneDead)
	if err != nil || moved != 1 {
		t.Fatalf("rescue moved %d, %v; want the started row made unknown", moved, err)
	}
	if got := readMessage(t, st, started.Message.ID).state; got != "unknown" {
		t.Errorf("the started row is %s, want unknown: its request may have reached the API", got)
	}
	if got := readMessage(t, st, idle.Message.ID).state; got != "pending" {
		t.Errorf("the row never started is %s, want pending", got)
	}
	// The row never sent gives its daily quota back; its attempt is
	// closed as a put-back's, the other's as unknown.
	if used := AccountByName(t, st, "a").UsedToday; used != 1 {
		t.Errorf("%d sends counted, want 1 (the lapsed claim's given back)", used)
	}
	for _, tt := range []struct {
		claim   campaign.Claim
		outcome string
	}{{started, "unknown"}, {idle, "retry"}} {
		if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE id = ? AND outcome = ? AND done_at = ?`,
			tt.claim.AttemptID, tt.outcome, clk.Now().UnixNano()); n != 1 {
			t.Errorf("attempt of row %d not closed as %s", tt.claim.Message.ID, tt.outcome)
		}
	}
	// The pending row is due at once, for anyone; its new claim has a
	// greater fence.
	again := mustClaim(t, st, c.ID, "other", clk.Now())
	if again.Message.ID != idle.Message.ID || again.Fence <= idle.Fence {
		t.Errorf("claimed row %d fence %d after the lapse, want row %d with a fence above %d",
			again.Message.ID, again.Fence, idle.Message.ID, idle.Fence)
	}
	// A second rescue finds nothing more.
	if moved, err := st.Rescue(t.Context(), c.ID, clk.Now(), noneDead); err != nil || moved != 0 {
		t.Errorf("second rescue moved %d, %v", moved, err)
	}
	// The late answer to the started request is the truth.
	if err := record(t, st, started, "r", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.late"}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got := readMessage(t, st, started.Message.ID); got.state != "sent" || got.wamid.String != "wamid.late" {
		t.Errorf("late sent: %+v, want sent with wamid.late", got)
	}
	sameCounts(t, st, "lease expiry", c.ID)
}

func (s suite) testFenceRefusesStaleRunner(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "fenced", 2)
	registerRunner(t, st, "stale", c.ID, t0)
	registerRunner(t, st, "next", c.ID, t0)

	// A row the stale runner never started: it lapses, the next runner
	// claims it, and the stale runner may neither start it nor put it
	// back.
	lapsed := mustClaim(t, st, c.ID, "stale", t0)
	// A row it started: it becomes unknown, the operator requeues it, and
	// the next runner claims it.
	sentBefore := mustClaim(t, st, c.ID, "stale", t0)
	mustStart(t, st, "stale", t0, sentBefore)
	clk.Set(at(time.Minute))
	if _, err := st.Rescue(t.Context(), c.ID, clk.Now(), noneDead); err != nil {
		t.Fatal(err)
	}
	if n, err := st.RequeueUnknown(t.Context(), c.ID); err != nil || n != 1 {
		t.Fatalf("requeue unknown: %d, %v", n, err)
	}
	registerRunner(t, st, "next", c.ID, clk.Now())
	byNext := map[int64]campaign.Claim{}
	for range 2 {
		cl := mustClaim(t, st, c.ID, "next", clk.Now())
		byNext[cl.Message.ID] = cl
	}
	if len(byNext) != 2 {
		t.Fatalf("the next runner claimed %d rows, want both", len(byNext))
	}
	if refused, err := st.Start(t.Context(), "stale", []campaign.Claim{lapsed}, clk.Now()); err != nil || len(refused) != 1 {
		t.Errorf("the stale runner's start: %v refused, %v; want refused", refused, err)
	}
	// In one batch, a stale claim is refused beside the new claim of its
	// row and another row's, which start; a request started already is
	// refused the second time.
	batch := []campaign.Claim{lapsed}
	for _, cl := range byNext {
		batch = append(batch, cl)
	}
	if refused, err := st.Start(t.Context(), "next", batch, clk.Now()); err != nil || !slices.Equal(refused, []int64{lapsed.Message.ID}) {
		t.Errorf("a stale claim beside live ones: %v refused, %v; want only %d", refused, err, lapsed.Message.ID)
	}
	if refused, err := st.Start(t.Context(), "next", batch[1:2], clk.Now()); err != nil || len(refused) != 1 {
		t.Errorf("a request started twice: %v refused, %v; want refused", refused, err)
	}
	for id, cl := range byNext {
		if got := readMessage(t, st, id); got.state != "sending" || got.wamid.Valid {
			t.Errorf("row %d after the stale writes: %+v, want the next runner's, sending", id, got)
		}
		if err := record(t, st, cl, "next", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.next", id)}, clk.Now()); err != nil {
			t.Errorf("the holder's own write: %v", err)
		}
	}
	if used := AccountByName(t, st, "a").UsedToday; used != 3 {
		t.Errorf("%d sends counted, want 3 (the lapsed claim's given back once, no refund by a stale put-back)", used)
	}
	sameCounts(t, st, "stale writes", c.ID)
}

// testRescuerRacesLateCompletion: rows whose lease ran out while their
// runner was stalled; one handle rescues while the runner, continued,
// starts its rows never started and records the answers of the others, at
// once, over and over. Whatever the order: a start refused is a row put
// back pending, a start taken is a row unknown or recorded; a sent answer
// is kept; a retry leaves its row pending (first) or unknown (after).
func (s suite) testRescuerRacesLateCompletion(t *testing.T) {
	const rounds, rows = 4, 12
	clk := newFakeClock()
	db := s.h.NewDB(t)
	rescuer, runnerDB := s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)
	MustAccount(t, rescuer, "a", campaign.TierNew, Limited(1000, rows, rounds*rows))
	for round := range rounds {
		clk.Advance(time.Second)
		c := MustCampaign(t, rescuer, fmt.Sprint("late", round), rows)
		runner := fmt.Sprint("stalled", round)
		registerRunner(t, runnerDB, runner, c.ID, clk.Now())
		cs, err := ledger(runnerDB).ClaimN(t.Context(), c.ID, runner, clk.Now(), rows)
		if err != nil || len(cs) != rows {
			t.Fatalf("round %d: claimed %d rows, %v", round, len(cs), err)
		}
		// The first half's requests started and were answered; the rest
		// wait for their start.
		mustStart(t, runnerDB, runner, clk.Now(), cs[:rows/2]...)
		var rs []campaign.Result
		for i, cl := range cs[:rows/2] {
			o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}
			if i%2 == 1 {
				o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: clk.Now().Add(time.Minute), ErrorCode: 131000}
			}
			rs = append(rs, campaign.Result{Claim: cl, Outcome: o, At: clk.Now()})
		}
		clk.Advance(campaign.LeaseTerm) // stalled past its lease
		var (
			wg      sync.WaitGroup
			refused []int64
		)
		wg.Go(func() {
			if _, err := rescuer.Rescue(t.Context(), c.ID, clk.Now(), noneDead); err != nil {
				t.Errorf("round %d: rescue: %v", round, err)
			}
		})
		wg.Go(func() {
			var err error
			if refused, err = runnerDB.Start(t.Context(), runner, cs[rows/2:], clk.Now()); err != nil {
				t.Errorf("round %d: start: %v", round, err)
			}
			if err := runnerDB.RecordAll(t.Context(), runner, rs); err != nil && !errors.Is(err, campaign.ErrFenced) {
				t.Errorf("round %d: record: %v", round, err)
			}
		})
		wg.Wait()
		// What is left after the race is the next rescue's.
		if _, err := rescuer.Rescue(t.Context(), c.ID, clk.Now(), noneDead); err != nil {
			t.Fatal(err)
		}
		lost := map[int64]bool{}
		for _, id := range refused {
			lost[id] = true
		}
		for i, cl := range cs {
			got := readMessage(t, rescuer, cl.Message.ID).state
			switch {
			case i < rows/2 && i%2 == 0:
				if got != "sent" {
					t.Errorf("round %d: row answered sent is %s", round, got)
				}
			case i < rows/2:
				if got != "pending" && got != "unknown" {
					t.Errorf("round %d: row answered with a retry is %s, want pending or unknown", round, got)
				}
			case lost[cl.Message.ID] && got != "pending":
				t.Errorf("round %d: row whose start was refused is %s, want pending", round, got)
			case !lost[cl.Message.ID] && got != "unknown":
				t.Errorf("round %d: row started under its lease is %s, want unknown (its request may be made)", round, got)
			}
		}
		if n := CountRows(t, rescuer, `SELECT count(*) FROM messages WHERE campaign_id = ? AND state = 'sending'`, c.ID); n != 0 {
			t.Errorf("round %d: %d rows left sending", round, n)
		}
		sameCounts(t, rescuer, fmt.Sprint("round ", round), c.ID)
	}
}

// testHeartbeatExtendsNearEnd: a beat leaves a lease with more than
// campaign.ExtendWithin to run as it is (a beat rewrites only the few rows
// still in flight late), and extends one nearer its end by a whole term.
func (s suite) testHeartbeatExtendsNearEnd(t *testing.T) {
	st, _, c, started, idle := s.startedAndIdle(t, "near end")
	early := campaign.LeaseTerm - campaign.ExtendWithin - time.Second
	if err := st.Heartbeat(t.Context(), "r", at(early)); err != nil {
		t.Fatal(err)
	}
	// Not extended: the leases still end a term after the claim.
	if moved, err := st.Rescue(t.Context(), c.ID, at(campaign.LeaseTerm), noneDead); err != nil || moved != 1 {
		t.Fatalf("rescue at the claim's lease end after an early beat moved %d, %v; want the started row", moved, err)
	}
	for id, want := range map[int64]string{started.Message.ID: "unknown", idle.Message.ID: "pending"} {
		if got := readMessage(t, st, id).state; got != want {
			t.Errorf("row %d is %s, want %s", id, got, want)
		}
	}

	st, _, c, started, idle = s.startedAndIdle(t, "near end 2")
	late := campaign.LeaseTerm - campaign.ExtendWithin
	if err := st.Heartbeat(t.Context(), "r", at(late)); err != nil {
		t.Fatal(err)
	}
	// Extended to a term after the beat: kept until then, taken at it.
	if moved, err := st.Rescue(t.Context(), c.ID, at(late+campaign.LeaseTerm-time.Millisecond), noneDead); err != nil || moved != 0 {
		t.Fatalf("rescue before the extended lease's end moved %d, %v", moved, err)
	}
	for _, cl := range []campaign.Claim{started, idle} {
		if got := readMessage(t, st, cl.Message.ID).state; got != "sending" {
			t.Errorf("row %d is %s before its extended lease ran out", cl.Message.ID, got)
		}
	}
	if moved, err := st.Rescue(t.Context(), c.ID, at(late+campaign.LeaseTerm), noneDead); err != nil || moved != 1 {
		t.Fatalf("rescue at the extended lease's end moved %d, %v; want the started row", moved, err)
	}
}

func (s suite) testHeartbeatsKeepRows(t *testing.T) {
	clk := newFakeClock()
	db := s.h.NewDB(t)
	slow, rescuer := s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)
	MustAccount(t, slow, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, slow, "slow", 3)
	registerRunner(t, slow, "slow", c.ID, t0)
	cs := []campaign.Claim{mustClaim(t, slow, c.ID, "slow", t0), mustClaim(t, slow, c.ID, "slow", t0), mustClaim(t, slow, c.ID, "slow", t0)}
	mustStart(t, slow, "slow", t0, cs[0])
	// Five minutes of slow requests, the runner beating, another runner
	// rescuing every 10 s: nothing is taken.
	for d := 10 * time.Second; d <= 5*time.Minute; d += 10 * time.Second {
		if err := slow.Heartbeat(t.Context(), "slow", at(d)); err != nil {
			t.Fatal(err)
		}
		if moved, err := rescuer.Rescue(t.Context(), c.ID, at(d), noneDead); err != nil || moved != 0 {
			t.Fatalf("rescue at +%v moved %d, %v", d, moved, err)
		}
	}
	clk.Set(at(5 * time.Minute))
	mustStart(t, slow, "slow", clk.Now(), cs[1]) // still its claim: it starts
	if err := record(t, slow, cs[0], "slow", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.slow"}, clk.Now()); err != nil {
		t.Errorf("the slow runner's answer: %v", err)
	}
	// A heartbeat revives leases run out that no rescuer took yet: the
	// holder keeps its rows until someone takes them.
	beat(t, slow, "slow", 5*time.Minute+time.Minute, 5*time.Minute+time.Minute)
	if moved, err := rescuer.Rescue(t.Context(), c.ID, at(6*time.Minute), noneDead); err != nil || moved != 0 {
		t.Fatalf("rescue after a late beat moved %d, %v", moved, err)
	}
	// Then it stops beating: a lease later, its rows are taken.
	moved, err := rescuer.Rescue(t.Context(), c.ID, at(6*time.Minute+campaign.LeaseTerm), noneDead)
	if err != nil || moved != 1 {
		t.Fatalf("rescue after the beats stopped moved %d, %v; want the started row", moved, err)
	}
	for i, want := range []string{"sent", "unknown", "pending"} {
		if got := readMessage(t, rescuer, cs[i].Message.ID).state; got != want {
			t.Errorf("row %d is %s, want %s", i, got, want)
		}
	}
	sameCounts(t, rescuer, "slow runner", c.ID)
}

// testLeaseContention: three handles on one database — three processes —
// each with 32 goroutines claiming, starting and answering rows, a row put
// back twice before it is sent: a row is held by one claim at a time, its
// fences strictly increase, and every write under a held lease is taken.
func (s suite) testLeaseContention(t *testing.T) {
	const (
		handles, workers = 3, 32
		messages, batch  = 150, 4
		claimsPerRow     = 3
	)
	clk := newFakeClock()
	stores := s.handles(t, handles, clk)
	for _, name := range []string{"a", "b", "c"} {
		MustAccount(t, stores[0], name, campaign.TierNew, Limited(1e6, 1e6, 1e6))
	}
	c := MustCampaign(t, stores[1], "leased", messages)

	var (
		mu      sync.Mutex
		holder  = map[int64]string{}  // message → the goroutine holding it
		fences  = map[int64][]int64{} // message → its claims' fences, in order
		sent    int
		wg      sync.WaitGroup
		failure = func(format string, args ...any) { t.Errorf(format, args...) }
	)
	for h := range handles {
		for w := range workers {
			st, runner := stores[h], fmt.Sprintf("h%d-w%d", h, w)
			registerRunner(t, st, runner, c.ID, t0)
			wg.Go(func() {
				for range 20 * messages { // a bound, so a livelock fails instead of hanging
					cs, err := ledger(st).ClaimN(t.Context(), c.ID, runner, clk.Now(), batch)
					var we *campaign.WaitError
					switch {
					case errors.Is(err, campaign.ErrDone):
						return
					case errors.As(err, &we) && we.Reason == campaign.WaitTokens:
						// A number sends at most its throughput a second:
						// time moves on a little (leases last far longer).
						clk.Advance(20 * time.Millisecond)
						continue
					case errors.As(err, &we):
						continue // another holds the last rows
					case err != nil:
						failure("%s: claim: %v", runner, err)
						return
					}
					mu.Lock()
					for _, cl := range cs {
						if prev, ok := holder[cl.Message.ID]; ok {
							failure("message %d claimed by %s while %s holds it", cl.Message.ID, runner, prev)
						}
						holder[cl.Message.ID] = runner
						if fs := fences[cl.Message.ID]; len(fs) > 0 && cl.Fence <= fs[len(fs)-1] {
							failure("message %d: fence %d after %v", cl.Message.ID, cl.Fence, fs)
						}
						fences[cl.Message.ID] = append(fences[cl.Message.ID], cl.Fence)
					}
					mu.Unlock()
					if refused, err := st.Start(t.Context(), runner, cs, clk.Now()); err != nil || len(refused) > 0 {
						failure("%s: start: %v refused, %v", runner, refused, err)
						return
					}
					rs := make([]campaign.Result, len(cs))
					done := 0
					for i, cl := range cs {
						o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: fmt.Sprint("wamid.", cl.Message.ID)}
						if cl.Fence < claimsPerRow {
							o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: clk.Now(), Refund: true, Class: "not-sent"}
						} else {
							done++
						}
						rs[i] = campaign.Result{Claim: cl, Outcome: o, At: clk.Now()}
					}
					// Let go before the write: once it commits, another may
					// claim the rows put back.
					mu.Lock()
					for _, cl := range cs {
						delete(holder, cl.Message.ID)
					}
					sent += done
					mu.Unlock()
					if err := st.RecordAll(t.Context(), runner, rs); err != nil {
						failure("%s: record under a held lease: %v", runner, err)
						return
					}
				}
				failure("%s: no end", runner)
			})
		}
	}
	wg.Wait()

	if sent != messages {
		t.Errorf("%d messages sent, want %d", sent, messages)
	}
	for id, fs := range fences {
		if len(fs) != claimsPerRow {
			t.Errorf("message %d claimed with fences %v, want %d claims", id, fs, claimsPerRow)
		}
	}
	st := stores[2]
	if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE state = 'sent' AND wamid = 'wamid.' || id AND attempts = ?`, claimsPerRow); n != messages {
		t.Errorf("%d messages sent with their wamid on their last claim, want %d", n, messages)
	}
	if used := AccountByName(t, st, "a").UsedToday + AccountByName(t, st, "b").UsedToday + AccountByName(t, st, "c").UsedToday; used != messages {
		t.Errorf("%d sends counted on the accounts, want %d (the put-backs given back)", used, messages)
	}
	sameCounts(t, st, "contention", c.ID)
}

// sameCounts holds a campaign's counts, as every move keeps them, to its
// rows (the harness recounts everything when the test ends).
func sameCounts(t *testing.T, st driver.Driver, step string, id int64) {
	t.Helper()
	counts, err := st.Counts(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range campaign.States {
		if n := CountRows(t, st, `SELECT count(*) FROM messages WHERE campaign_id = ? AND state = ?`, id, string(state)); n != counts[state] {
			t.Errorf("after %s: %d rows %s, counted %d", step, n, state, counts[state])
		}
	}
}

// testLateAnswersBeforeRescue: a host stopped after its answers came but
// before it recorded them, continued after a rescue closed their attempts:
// its late records (dated when the answers came, before the rescue) must
// not move a closed attempt back in time (the kept attempt counts would
// then differ from a recount; found by the torture suite's host kills).
func (s suite) testLateAnswersBeforeRescue(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, Limited(1000, 10, 100))
	c := MustCampaign(t, st, "late", 2)
	registerRunner(t, st, "stopped", c.ID, clk.Now())
	cs, err := ledger(st).ClaimN(t.Context(), c.ID, "stopped", clk.Now(), 2)
	if err != nil || len(cs) != 2 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	mustStart(t, st, "stopped", clk.Now(), cs...)
	answered := clk.Now().Add(100 * time.Millisecond) // the answers came, then the process stopped
	clk.Advance(40 * time.Second)
	if _, err := st.Rescue(t.Context(), c.ID, clk.Now(), func(r campaign.Runner) bool { return r.ID == "stopped" }); err != nil {
		t.Fatal(err)
	}
	rescued := clk.Now()
	rs := []campaign.Result{
		{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}, At: answered},
		{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: answered.Add(time.Minute), ErrorCode: 131000}, At: answered},
	}
	err = st.RecordAll(t.Context(), "stopped", rs)
	var fe *campaign.FenceError
	if err != nil && !errors.As(err, &fe) {
		t.Fatal(err)
	}
	if got := readMessage(t, st, cs[0].Message.ID); got.state != "sent" || got.wamid.String != "wamid.1" {
		t.Errorf("the late sent answer: %+v, want sent with wamid.1 (the wamid is the truth)", got)
	}
	if got := readMessage(t, st, cs[1].Message.ID); got.state != "unknown" {
		t.Errorf("the late retry: %+v, want the row left unknown as the rescue made it", got)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE message_id IN (?, ?) AND (done_at IS NULL OR done_at < ?)`,
		cs[0].Message.ID, cs[1].Message.ID, rescued.UnixNano()); n != 0 {
		t.Errorf("%d attempts closed before the rescue after the late answers, want 0: a closed attempt's time never goes back", n)
	}
	sameCounts(t, st, "the continued runner's late answers", c.ID)
}

// testLapseUnlogsContact: a claim logs its send to the recipient (the pair
// gap, the sticky sender and the reach read that log); a row that lapses
// never reached the API, so its entry is taken back as a refunded send's
// is, while a row made unknown keeps its own.
func (s suite) testLapseUnlogsContact(t *testing.T) {
	st, clk, c, started, idle := s.startedAndIdle(t, "lapse log")
	logged := func(cl campaign.Claim) int {
		return CountRows(t, st, `SELECT count(*) FROM contact_log WHERE phone = ? AND account_id = ? AND last_at = ?`,
			cl.Message.Phone, cl.Account.ID, cl.At.UnixNano())
	}
	for _, cl := range []campaign.Claim{started, idle} {
		if n := logged(cl); n != 1 {
			t.Fatalf("the claim of row %d logged %d sends to %s, want 1", cl.Message.ID, n, cl.Message.Phone)
		}
	}
	clk.Set(at(campaign.LeaseTerm))
	if moved, err := st.Rescue(t.Context(), c.ID, clk.Now(), noneDead); err != nil || moved != 1 {
		t.Fatalf("rescue moved %d, %v; want the started row made unknown", moved, err)
	}
	if n := logged(idle); n != 0 {
		t.Errorf("the lapsed claim of row %d still logs a send to %s: the pair gap, sticky sender and reach count a send that never happened",
			idle.Message.ID, idle.Message.Phone)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM contact_log WHERE phone = ? AND last_at > 0`, idle.Message.Phone); n != 0 {
		t.Errorf("%d sends logged to %s after its only claim lapsed, want none", n, idle.Message.Phone)
	}
	if n := logged(started); n != 1 {
		t.Errorf("the claim of row %d made unknown logs %d sends, want 1: its request may have reached the API", started.Message.ID, n)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM gate_refunds`); n != 0 {
		t.Errorf("%d gate refunds queued by a database that never shared its limits, want none", n)
	}
	sameCounts(t, st, "lapse", c.ID)
}

// testLapseQueuesGateRefund: under shared limits the gate charged the
// claim too (its cap, the recipient's pair gap and reach), and a claim
// that lapsed reached nobody: its refund is queued, by the id the claim
// asked the gate with (campaign.SharedClaimID: host, row, claim count) and
// in its account's portfolio, for the next claim to give back, whichever
// rescue ends the lease. The claim made unknown keeps its charge; the
// late put-back of the lapsed claim, and a second rescue, queue nothing
// more.
func (s suite) testLapseQueuesGateRefund(t *testing.T) {
	for _, tt := range []struct {
		name, portfolio, want string
		all                   bool // RecoverOrphans (every campaign), not Rescue
	}{
		{name: "default portfolio", want: driver.DefaultPortfolio},
		{name: "its portfolio", portfolio: "acme", want: "acme"},
		{name: "every campaign's rescue", want: driver.DefaultPortfolio, all: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, clk, c, started, idle := s.startedAndIdle(t, "lapse refund")
			if tt.portfolio != "" {
				mustPortfolio(t, st, tt.portfolio, 0, 0)
				joinPortfolio(t, st, "a", tt.portfolio)
			}
			// The claims were the database's own; from now on its limits are
			// shared, which gives it its host id (only the rescue runs after).
			if err := st.ShareLimits(t.Context(), nil, func(error) bool { return false }); err != nil {
				t.Fatal(err)
			}
			var host string
			if err := checked(st).QueryRowContext(t.Context(), `SELECT value FROM settings WHERE key = 'limits_host'`).Scan(&host); err != nil {
				t.Fatal(err)
			}
			rescue := func() {
				t.Helper()
				var moved int
				var err error
				if tt.all {
					var per map[int64]int
					per, err = st.RecoverOrphans(t.Context(), clk.Now(), noneDead)
					moved = per[c.ID]
				} else {
					moved, err = st.Rescue(t.Context(), c.ID, clk.Now(), noneDead)
				}
				if err != nil || moved > 1 {
					t.Fatalf("rescue moved %d, %v; want at most the started row made unknown", moved, err)
				}
			}
			clk.Set(at(campaign.LeaseTerm))
			rescue()
			if got := readMessage(t, st, started.Message.ID).state; got != "unknown" {
				t.Fatalf("the started row is %s after the rescue, want unknown", got)
			}
			want := campaign.SharedClaimID(host, idle.Message.ID, int(idle.Fence))
			queued := clk.Now().UnixNano()
			check := func(when string) {
				t.Helper()
				if n := CountRows(t, st, `SELECT count(*) FROM gate_refunds WHERE claim = ? AND portfolio = ?
					AND account = '' AND day = '' AND at = ?`, want, tt.want, queued); n != 1 {
					t.Errorf("%s: %d refunds of the lapsed claim %s in portfolio %s queued, want 1", when, n, want, tt.want)
				}
				if n := CountRows(t, st, `SELECT count(*) FROM gate_refunds`); n != 1 {
					t.Errorf("%s: %d refunds queued, want only the lapsed claim's (row %d's request may have reached the API)",
						when, n, started.Message.ID)
				}
			}
			check("the rescue")
			clk.Advance(time.Second)
			late := campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: clk.Now(), Refund: true, Class: "not-sent"}
			idle.Shared = &campaign.SharedClaim{Portfolio: tt.want, ID: want}
			if err := record(t, st, idle, "r", late, clk.Now()); !errors.Is(err, campaign.ErrFenced) {
				t.Fatalf("the lapsed claim's late put-back: %v, want ErrFenced", err)
			}
			rescue()
			check("the late put-back and a second rescue")
		})
	}
}

// testStartedAlong: RecordAndClaimN marks the first rows it claims started
// in its own transaction (the engine's claims along with a place in
// flight), the others not. A marked claim put back unsent (the engine's
// admit refused it) goes back to pending with its quota; at the end of the
// lease a marked row becomes unknown, an unmarked one pending.
func (s suite) testStartedAlong(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "along", 5)
	registerRunner(t, st, "r", c.ID, t0)
	first := mustClaim(t, st, c.ID, "r", t0)
	mustStart(t, st, "r", t0, first)
	rs := []campaign.Result{{Claim: first, At: t0, Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.1"}}}
	next, claimErr, err := ledger(st).RecordAndClaimN(t.Context(), "r", rs, c.ID, t0, 4, 2)
	if err != nil || claimErr != nil || len(next) != 4 {
		t.Fatalf("record and claim: %d claims, %v, %v; want 4", len(next), claimErr, err)
	}
	for i, cl := range next {
		want := i < 2
		if cl.Started != want {
			t.Errorf("claim %d: Started %v, want %v", i, cl.Started, want)
		}
		mark := 0
		if want {
			mark = 1
		}
		if n := CountRows(t, st, `SELECT count(*) FROM attempts WHERE id = ? AND started = ?`, cl.AttemptID, mark); n != 1 {
			t.Errorf("claim %d: its attempt is not marked %d", i, mark)
		}
	}
	// The first marked claim may not go after all: put back, no request.
	back := campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: t0, Refund: true, Class: "not-sent", Error: "not sent: the account or campaign stopped meanwhile"}
	if err := record(t, st, next[0], "r", back, t0); err != nil {
		t.Fatal(err)
	}
	if got := readMessage(t, st, next[0].Message.ID).state; got != "pending" {
		t.Errorf("the marked claim put back is %s, want pending: no request was made", got)
	}
	clk.Set(at(campaign.LeaseTerm))
	moved, err := st.Rescue(t.Context(), c.ID, clk.Now(), noneDead)
	if err != nil || moved != 1 {
		t.Fatalf("rescue moved %d, %v; want the marked row in flight made unknown", moved, err)
	}
	for i, want := range []string{"pending", "unknown", "pending", "pending"} {
		if got := readMessage(t, st, next[i].Message.ID).state; got != want {
			t.Errorf("claim %d: row %s after the lease, want %s", i, got, want)
		}
	}
	// Counted: the sent row and the unknown one; the put-back and the
	// lapsed claims gave their quota back.
	if used := AccountByName(t, st, "a").UsedToday; used != 2 {
		t.Errorf("%d sends counted, want 2", used)
	}
	sameCounts(t, st, "claims along", c.ID)
}
