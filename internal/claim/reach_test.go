package claim

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/store"
)

func TestClaimAdmitsAgainstPortfolioReach(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	portfolioOfTwo(t, st, 3)
	c := mustCampaign(t, st, "first", 6)

	h := time.Hour
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantAccount: "a"},
		{At: 0, WantAccount: "b"},
		{At: 2 * h, WantAccount: "a"},
		// Both numbers share the portfolio: the third recipient used it up
		// for the two of them, until the first ones leave the window.
		{At: 3 * h, WantWait: campaign.WaitReach, WantUntil: 24 * h},
		{At: 24*h - 1, WantWait: campaign.WaitReach, WantUntil: 24 * h},
		{At: 24 * h, WantAccount: "a"},
		{At: 24 * h, WantAccount: "b"},
		{At: 24 * h, WantWait: campaign.WaitReach, WantUntil: 26 * h},
	})
	ports, err := st.Portfolios(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p := ports[0]; p.Name != "acme" || p.Used != 3 || p.Allowed != 3 || !p.FreesAt.Equal(at(26*h)) {
		t.Errorf("portfolio %+v, want acme with 3 of 3 used, room at +26h", p)
	}
}

// TestReachRepeatsFree claims a campaign whose rows are all within the
// window: none costs a unit, full as the window is.
func TestReachRepeatsFree(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 4, 0)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	joinPortfolio(t, st, "a", "acme")
	first := mustCampaign(t, st, "first", 4)
	for range 4 {
		mustClaim(t, st, first.ID, "r1", t0)
	}
	second := mustCampaign(t, st, "second", 6) // phone(0…3) again, then two new ones
	cs, err := New(st).ClaimN(t.Context(), second.ID, "r1", at(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("claimed %d, want the 4 repeats", len(cs))
	}
	_, err = New(st).ClaimN(t.Context(), second.ID, "r1", at(time.Hour), 10)
	var we *campaign.WaitError
	// The repeats at +1h renewed their recipients: the window makes room
	// when they leave, at +25h.
	if !errors.As(err, &we) || we.Reason != campaign.WaitReach || !we.Until.Equal(at(25*time.Hour)) {
		t.Fatalf("claim of the new ones: %v, want a reach wait until +25h", err)
	}
}

func TestReachOwnPortfolioAndMargin(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "small", 20, 0.1) // 18 after the margin
	mustAccount(t, st, "a", campaign.TierNew, fast)
	mustAccount(t, st, "solo", campaign.TierNew, fast) // no portfolio, no limit known: nothing held back
	joinPortfolio(t, st, "a", "small")
	if _, err := st.UpdateAccount(t.Context(), "solo", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "c", 40)
	cs, err := New(st).ClaimN(t.Context(), c.ID, "r1", t0, 40)
	if err != nil || len(cs) != 18 {
		t.Fatalf("claimed %d (%v), want 18: 20 minus 10 %%", len(cs), err)
	}
	if _, err := st.UpdateAccount(t.Context(), "solo", campaign.AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	cs, err = New(st).ClaimN(t.Context(), c.ID, "r1", t0, 40)
	if err != nil || len(cs) != 22 {
		t.Fatalf("claimed %d (%v), want the other 22 on solo", len(cs), err)
	}
	for _, cl := range cs {
		if cl.Account.Name != "solo" {
			t.Fatalf("claimed on %s while its portfolio is full", cl.Account.Name)
		}
	}
}

// TestReachRefundTakesTheUnitBack: a request the API proved it refused
// did not reach anyone, so its recipient leaves the count.
func TestReachRefundTakesTheUnitBack(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 1, 0)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	joinPortfolio(t, st, "a", "acme")
	c := mustCampaign(t, st, "c", 2)
	first := mustClaim(t, st, c.ID, "r1", t0)
	if err := record(t.Context(), st, first, "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026,
		Error: "undeliverable", Refund: true}, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	second := mustClaim(t, st, c.ID, "r1", at(time.Minute))
	if second.Message.Phone == first.Message.Phone {
		t.Fatal("the failed row was claimed again")
	}
}

// TestReachAcrossProcesses: two store handles on one database (as two
// processes have) claim one campaign concurrently at advancing instants;
// no 24 h window ever holds more distinct recipients than allowed, and
// the window is used to exactly that. A send counts at the instant its
// claim acted at (Claim.At, what the send log holds): a worker whose now
// lags the buckets another one stamped acts at their stamp, not at its
// own now (notBefore).
func TestReachAcrossProcesses(t *testing.T) {
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "wasend.db")
	stores := []*store.Store{openAt(t, path, clk), openAt(t, path, clk)}
	mustPortfolio(t, stores[0], "acme", 25, 0.2) // 20 allowed
	for _, name := range []string{"a", "b", "c"} {
		mustAccount(t, stores[0], name, campaign.TierNew, fast)
		joinPortfolio(t, stores[1], name, "acme")
	}
	c := mustCampaign(t, stores[0], "race", 70)
	var (
		mu    sync.Mutex
		sends []time.Time
		wg    sync.WaitGroup
		step  = 50 * time.Minute
	)
	for w := range 6 {
		st := stores[w%2]
		wg.Go(func() {
			for k := range 400 {
				now := at(time.Duration(k) * step / 4)
				cs, err := New(st).ClaimN(t.Context(), c.ID, fmt.Sprint("r", w), now, 3)
				var we *campaign.WaitError
				switch {
				case errors.Is(err, campaign.ErrDone):
					return
				case errors.As(err, &we):
					continue
				case err != nil:
					t.Error(err)
					return
				}
				mu.Lock()
				for _, cl := range cs {
					sends = append(sends, cl.At)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(sends) != 70 {
		t.Fatalf("%d claimed, want 70", len(sends))
	}
	// Every recipient is distinct: a window's sends are its recipients.
	best := 0
	for _, end := range sends {
		n := 0
		for _, s := range sends {
			if ratelimit.InWindow(end, s) {
				n++
			}
		}
		best = max(best, n)
	}
	if best != 20 {
		t.Errorf("at most %d distinct recipients in a 24 h window, want exactly 20", best)
	}
}

// TestReachBackwardsClock: a claim whose instant lies before sends
// already logged (another process's clock, behind) is judged against
// every window it would join, not only its own: sends after its instant
// count too. Without them the claim at +10h would see one recipient in
// its window and admit a third to the window ending at +20h.
func TestReachBackwardsClock(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	portfolioOfTwo(t, st, 2)
	enable := func(name string, on bool) {
		t.Helper()
		if _, err := st.UpdateAccount(t.Context(), name, campaign.AccountChange{Disabled: ptr(!on)}); err != nil {
			t.Fatal(err)
		}
	}
	// No global bucket: its stamp would move the late claim to it.
	if err := st.SetGlobalLimit(t.Context(), false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "c", 6)
	h := time.Hour
	enable("b", false)
	runClaims(t, st, clk, c.ID, []claimStep{
		{At: 0, WantAccount: "a"},
		{At: 20 * h, WantAccount: "a"},
		{At: 20 * h, WantWait: campaign.WaitReach, WantUntil: 24 * h},
		{At: 30 * h, WantAccount: "a"}, // the window (+6h, +30h] holds +20h's alone
	})
	// b has stamped no bucket: a claim on it acts at its own instant, +10h,
	// whose window holds +0h's recipient alone, while the windows ending
	// from +20h on are full. Its campaign's recipients are new (c's rows
	// are held for the window).
	clk.Set(at(10 * h))
	enable("a", false)
	enable("b", true)
	late := importPhones(t, st, "late", phone(10), phone(11))
	cs, err := New(st).ClaimN(t.Context(), late.ID, "r2", at(10*h), 2)
	var we *campaign.WaitError
	if !errors.As(err, &we) || we.Reason != campaign.WaitReach {
		t.Fatalf("claim at +10h: %v (%d claims), want a reach wait", err, len(cs))
	}
}

// TestReachFullStillAdmitsRepeats: a new recipient the full window
// refuses does not hold back a recipient behind it who is in the window.
func TestReachFullStillAdmitsRepeats(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 2, 0)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	joinPortfolio(t, st, "a", "acme")
	first := mustCampaign(t, st, "first", 2) // phone(0), phone(1): the window is full
	if cs, err := New(st).ClaimN(t.Context(), first.ID, "r1", t0, 2); err != nil || len(cs) != 2 {
		t.Fatalf("first: %d claims, %v", len(cs), err)
	}
	mixed := importPhones(t, st, "mixed", phone(7), phone(1)) // new, then a repeat
	cs, err := New(st).ClaimN(t.Context(), mixed.ID, "r1", at(time.Hour), 2)
	if err != nil || len(cs) != 1 || cs[0].Message.Phone != phone(1) {
		t.Fatalf("claimed %v (%v), want the repeat %s alone", cs, err, phone(1))
	}
}

// importPhones imports a campaign of one row per phone, in order.
func importPhones(t *testing.T, st *store.Store, name string, phones ...string) campaign.Campaign {
	t.Helper()
	im, err := st.Import(t.Context(), campaign.Campaign{Name: name, Fingerprint: "fp-" + name, Source: name + ".csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i, p := range phones {
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: p, Phone: p}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
