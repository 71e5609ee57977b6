package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

func (s suite) budgetTests() []sub {
	return []sub{
		{"a budget: what counts against it follows the rows, a new start recounts at its prices", s.testBudgetCommitted},
		{"a budget: the claim stops before it, for every runner; a failure gives a row's price back", s.testBudgetClaim},
		{"a budget: rows in queue order, a cheaper one behind never jumps one that does not fit", s.testBudgetQueueOrder},
		{"a budget: three handles claiming at once pass it no more than one", s.testBudgetHandles},
		{"a budget: a new start's recount racing outcomes on another handle stays the rows' sum", s.testBudgetRecountRace},
	}
}

func budgetOf(t *testing.T, st driver.Driver, id int64) pricing.Budget {
	t.Helper()
	b, err := readmodel.New(st).CampaignBudget(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testBudgetCommitted: what counts against a budget follows the rows as
// the claim takes them and their outcomes settle; each SetBudget prices
// the rows again and recounts.
func (s suite) testBudgetCommitted(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	ctx := t.Context()
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "spring", 5)
	if err := st.SetBudget(ctx, c.ID+1, 1_000_000, "EUR", func(string) pricing.Micros { return 1000 }); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("a budget for no campaign: %v, want ErrNotFound", err)
	}
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "EUR", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Max != 1_000_000 || b.Currency != "EUR" || b.Committed != 0 {
		t.Fatalf("budget = %+v", b)
	}
	cs, err := ledger(st).ClaimN(ctx, c.ID, "r", clk.Now(), 3)
	if err != nil || len(cs) != 3 {
		t.Fatalf("claim: %d, %v", len(cs), err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 3000 {
		t.Errorf("committed with 3 in flight = %v, want 0.003", b.Committed)
	}
	rs := []campaign.Result{
		{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, At: clk.Now()},
		{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, At: clk.Now()},
	}
	if err := st.RecordAll(ctx, "r", rs); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 2000 {
		t.Errorf("committed after one sent, one failed, one in flight = %v, want 0.002", b.Committed)
	}
	// A second start recounts from the rows: the same figure.
	if err := st.SetBudget(ctx, c.ID, 2_000_000, "EUR", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 2000 || b.Max != 2_000_000 {
		t.Errorf("after a raised budget: %+v", b)
	}
	// A start under a dearer card prices the rows again: the sent row and
	// the one in flight count at the new price, and the one in flight
	// gives it back when it fails.
	if err := st.SetBudget(ctx, c.ID, 2_000_000, "EUR", func(string) pricing.Micros { return 1500 }); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 3000 {
		t.Errorf("committed after re-pricing at 0.0015 = %v, want 0.003", b.Committed)
	}
	if err := st.RecordAll(ctx, "r", []campaign.Result{{Claim: cs[2], At: clk.Now(),
		Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}}}); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 1500 {
		t.Errorf("committed with one sent at 0.0015 = %v, want 0.0015", b.Committed)
	}
	// --max-cost 0: no budget, the rows unpriced, nothing counted.
	if err := st.SetBudget(ctx, c.ID, 0, "", func(string) pricing.Micros { return 0 }); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, st, c.ID); b.Max != 0 || b.Committed != 0 {
		t.Errorf("after the budget is removed (rows unpriced): %+v", b)
	}
}

// testBudgetClaim: a claim admits rows while accepted + in flight + the
// row's price stay within --max-cost; then it says ErrBudget, also to
// another runner; an outcome that fails a row gives its price back; a
// raised budget admits the rest.
func (s suite) testBudgetClaim(t *testing.T) {
	now := t0
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "budget", 6)
	price := func(string) pricing.Micros { return 25_000 }
	if err := st.SetBudget(ctx, c.ID, 60_000, "USD", price); err != nil {
		t.Fatal(err)
	}
	l := ledger(st)
	cs, err := l.ClaimN(ctx, c.ID, "r1", now, 6)
	if err != nil || len(cs) != 2 {
		t.Fatalf("first claim: %d rows, %v; want 2 (2 × 0.025 ≤ 0.06 < 3 × 0.025)", len(cs), err)
	}
	for _, r := range []string{"r1", "r2"} {
		if _, err := l.ClaimN(ctx, c.ID, r, now, 6); !errors.Is(err, campaign.ErrBudget) {
			t.Fatalf("%s's claim with 0.05 in flight: %v, want ErrBudget", r, err)
		}
	}
	// One accepted, one refused for good: 0.025 counts, a row fits again.
	if err := st.RecordAll(ctx, "r1", []campaign.Result{
		{Claim: cs[0], Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w1"}, At: now},
		{Claim: cs[1], Outcome: campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026, Error: "undeliverable"}, At: now},
	}); err != nil {
		t.Fatal(err)
	}
	if cs, err = l.ClaimN(ctx, c.ID, "r1", now, 6); err != nil || len(cs) != 1 {
		t.Fatalf("after a failure: %d rows, %v; want 1", len(cs), err)
	}
	if err := st.SetBudget(ctx, c.ID, 1_000_000, "USD", price); err != nil {
		t.Fatal(err)
	}
	if cs, err = l.ClaimN(ctx, c.ID, "r1", now, 6); err != nil || len(cs) != 3 {
		t.Fatalf("raised budget: %d rows, %v; want the 3 left", len(cs), err)
	}
	if b := budgetOf(t, st, c.ID); b.Committed != 5*25_000 {
		t.Errorf("committed = %v, want 0.125 (5 rows accepted or in flight)", b.Committed)
	}
}

// testBudgetQueueOrder: the claim stops at the first row that would pass
// the budget, though a cheaper one behind it would fit; the refusal says
// how far it got.
func (s suite) testBudgetQueueOrder(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	ctx := t.Context()
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	c := MustCampaign(t, st, "order", 3)
	prices := map[string]pricing.Micros{Phone(0): 10_000, Phone(1): 50_000, Phone(2): 10_000}
	if err := st.SetBudget(ctx, c.ID, 30_000, "USD", func(p string) pricing.Micros { return prices[p] }); err != nil {
		t.Fatal(err)
	}
	cs, err := ledger(st).ClaimN(ctx, c.ID, "r", t0, 3)
	if err != nil || len(cs) != 1 || cs[0].Message.Phone != Phone(0) {
		t.Fatalf("claim: %d rows, %v; want the first only (0.01, then 0.05 would pass 0.03)", len(cs), err)
	}
	_, err = ledger(st).ClaimN(ctx, c.ID, "r", t0, 3)
	if want := "0.01 USD accepted or in flight, and the next message would cost 0.03 more than the 0.03 USD"; !errors.Is(err, campaign.ErrBudget) ||
		!strings.Contains(err.Error(), want) {
		t.Errorf("next claim: %v; want ErrBudget saying %q", err, want)
	}
}

// testBudgetHandles: three handles on one database — three hosts — each
// with goroutines claiming batches under one budget at once: together they
// take exactly the rows it admits, as one runner would, because each claim
// counts every other's rows in flight.
func (s suite) testBudgetHandles(t *testing.T) {
	const (
		handles, workers = 3, 4
		price, max       = 25_000, 410_000 // 16 rows fit, the 17th would pass it
	)
	clk := newFakeClock()
	stores := s.handles(t, handles, clk)
	MustAccount(t, stores[0], "a", campaign.TierNew, Limited(100, 60, 60)) // tokens for every row
	c := MustCampaign(t, stores[0], "shared", 60)
	if err := stores[1].SetBudget(t.Context(), c.ID, max, "USD", func(string) pricing.Micros { return price }); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		claimed = map[int64]string{}
		wg      sync.WaitGroup
	)
	for h := range handles {
		for w := range workers {
			st, runner := stores[h], fmt.Sprintf("h%d-w%d", h, w)
			wg.Go(func() {
				for range 100 { // a bound: a livelock fails instead of hanging
					cs, err := ledger(st).ClaimN(t.Context(), c.ID, runner, t0, 3)
					if errors.Is(err, campaign.ErrBudget) {
						return
					}
					if err != nil {
						t.Errorf("%s: claim: %v", runner, err)
						return
					}
					mu.Lock()
					for _, cl := range cs {
						if prev, ok := claimed[cl.Message.ID]; ok {
							t.Errorf("message %d claimed by %s and %s", cl.Message.ID, prev, runner)
						}
						claimed[cl.Message.ID] = runner
					}
					mu.Unlock()
				}
				t.Errorf("%s: never stopped by the budget", runner)
			})
		}
	}
	wg.Wait()
	if len(claimed) != max/price {
		t.Errorf("%d rows claimed under a budget of %d at %d each, want %d", len(claimed), max, price, max/price)
	}
	if b := budgetOf(t, stores[2], c.ID); b.Committed != pricing.Micros(max/price*price) {
		t.Errorf("committed = %v, want %v", b.Committed, pricing.Micros(max/price*price))
	}
}

// testBudgetRecountRace: a run starting with a budget on one handle (a
// host) prices the rows and recounts what is committed while another
// claims rows and its rescuer puts them back (a move that does not wait
// for claims): whichever comes first, what is committed ends as the sum
// over the rows it counts.
func (s suite) testBudgetRecountRace(t *testing.T) {
	const n = 60
	clk := newFakeClock()
	db := s.h.NewDB(t)
	sender, starter := s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)
	ctx := t.Context()
	MustAccount(t, sender, "a", campaign.TierNew, Limited(100, 200, 200))
	c := MustCampaign(t, sender, "race", n)
	if err := sender.SetBudget(ctx, c.ID, 1_000_000_000, "USD", func(string) pricing.Micros { return 1000 }); err != nil {
		t.Fatal(err)
	}
	gone := func(campaign.Runner) bool { return true }
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20 {
			if _, err := ledger(sender).ClaimN(ctx, c.ID, "r", t0, 3); err != nil {
				t.Errorf("claim %d: %v", i, err)
				return
			}
			// The runner is gone: its rows, never started, go back to pending.
			if _, err := sender.Rescue(ctx, c.ID, t0, gone); err != nil {
				t.Errorf("rescue: %v", err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 16 {
			// 1000, 1000, 1500, 1500, …: a start at the prices in force
			// writes no row but recounts; one at new prices writes them all.
			p := pricing.Micros(1000 + 500*(i/2%2))
			if err := starter.SetBudget(ctx, c.ID, 1_000_000_000, "USD", func(string) pricing.Micros { return p }); err != nil {
				t.Errorf("start %d: %v", i, err)
				return
			}
		}
	})
	wg.Wait()
	if cs, err := ledger(sender).ClaimN(ctx, c.ID, "r2", t0, 5); err != nil || len(cs) != 5 {
		t.Fatalf("last claim: %d rows, %v; want 5", len(cs), err)
	}
	var sum int64
	if err := checked(starter).QueryRowContext(ctx, `SELECT coalesce(sum(price), 0) FROM messages
		WHERE campaign_id = ? AND state IN ('sending', 'sent', 'unknown')`, c.ID).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if b := budgetOf(t, sender, c.ID); int64(b.Committed) != sum || sum != 5*1500 {
		t.Errorf("committed = %d µ, the rows' sum %d µ; want both %d (5 in flight at the last start's 0.0015)", b.Committed, sum, 5*1500)
	}
}
