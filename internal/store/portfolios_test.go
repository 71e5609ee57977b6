package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

func mustPortfolio(t *testing.T, st *Store, name string, limit int, margin float64) {
	t.Helper()
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: name, PinnedLimit: limit, Margin: margin}); err != nil {
		t.Fatal(err)
	}
}

func joinPortfolio(t *testing.T, st *Store, account, portfolio string) {
	t.Helper()
	if _, err := st.UpdateAccount(t.Context(), account, AccountChange{Portfolio: &portfolio}); err != nil {
		t.Fatal(err)
	}
}

// fast are limits under which only the reach holds a claim back.
var fast = limited(1000, 1000, 100000)

func TestClaimAdmitsAgainstPortfolioReach(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 3, 0)
	mustAccount(t, st, "a", campaign.TierNew, fast)
	mustAccount(t, st, "b", campaign.TierNew, fast)
	joinPortfolio(t, st, "a", "acme")
	joinPortfolio(t, st, "b", "acme")
	c := mustCampaign(t, st, "first", 6)

	h := time.Hour
	runClaims(t, st, clk, c.ID, []claimStep{
		{at: 0, wantAccount: "a"},
		{at: 0, wantAccount: "b"},
		{at: 2 * h, wantAccount: "a"},
		// Both numbers share the portfolio: the third recipient used it up
		// for the two of them, until the first ones leave the window.
		{at: 3 * h, wantWait: campaign.WaitReach, wantUntil: 24 * h},
		{at: 24*h - 1, wantWait: campaign.WaitReach, wantUntil: 24 * h},
		{at: 24 * h, wantAccount: "a"},
		{at: 24 * h, wantAccount: "b"},
		{at: 24 * h, wantWait: campaign.WaitReach, wantUntil: 26 * h},
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
	cs, err := st.ClaimN(t.Context(), second.ID, "r1", at(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("claimed %d, want the 4 repeats", len(cs))
	}
	_, err = st.ClaimN(t.Context(), second.ID, "r1", at(time.Hour), 10)
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
	if _, err := st.UpdateAccount(t.Context(), "solo", AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, st, "c", 40)
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", t0, 40)
	if err != nil || len(cs) != 18 {
		t.Fatalf("claimed %d (%v), want 18: 20 minus 10 %%", len(cs), err)
	}
	if _, err := st.UpdateAccount(t.Context(), "solo", AccountChange{Disabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	cs, err = st.ClaimN(t.Context(), c.ID, "r1", t0, 40)
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
	if err := st.Record(t.Context(), first, "r1", campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131026,
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
// the window is used to exactly that.
func TestReachAcrossProcesses(t *testing.T) {
	clk := newFakeClock()
	path := filepath.Join(t.TempDir(), "wasend.db")
	stores := []*Store{openAt(t, path, clk), openAt(t, path, clk)}
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
				cs, err := st.ClaimN(t.Context(), c.ID, fmt.Sprint("r", w), now, 3)
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
				for range cs {
					sends = append(sends, now)
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

func TestPortfolioManagement(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustPortfolio(t, st, "acme", 2000, 0.05)
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: "acme"}); !errors.Is(err, ErrExists) {
		t.Errorf("second acme: %v, want ErrExists", err)
	}
	for _, bad := range []campaign.Portfolio{{Name: " "}, {Name: "x", Margin: 1}, {Name: "x", Margin: -0.1}, {Name: "x", PinnedLimit: -5}} {
		if _, err := st.AddPortfolio(t.Context(), bad); err == nil {
			t.Errorf("AddPortfolio(%+v) accepted", bad)
		}
	}
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "a", PhoneNumberID: "1", Tier: "new", TokenEnv: "T", Portfolio: "nope"}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("account in an unknown portfolio: %v, want ErrNotFound", err)
	}
	if n := countRows(t, st, `SELECT count(*) FROM accounts`); n != 0 {
		t.Errorf("a refused account was stored")
	}
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "a", PhoneNumberID: "1", Tier: "new", TokenEnv: "T", Portfolio: "acme"}); err != nil {
		t.Fatal(err)
	}
	mustAccount(t, st, "solo", campaign.TierNew, campaign.Overrides{})
	if _, err := st.UpdatePortfolio(t.Context(), "acme", PortfolioChange{PinnedLimit: ptr(10000), Margin: ptr(0.02)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdatePortfolio(t.Context(), "nope", PortfolioChange{Margin: ptr(0.02)}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("update of an unknown portfolio: %v", err)
	}
	ps, err := st.Portfolios(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d portfolios, want acme and solo's own: %+v", len(ps), ps)
	}
	if p := ps[0]; p.Name != "acme" || p.Own || p.Limit != 10000 || p.Allowed != 9800 || len(p.Accounts) != 1 || p.Accounts[0] != "a" {
		t.Errorf("acme = %+v", p)
	}
	if p := ps[1]; p.Name != "solo" || !p.Own || p.Limit != 0 {
		t.Errorf("solo = %+v", p)
	}
	if a := accountByName(t, st, "a"); a.Portfolio != "acme" {
		t.Errorf("account a in %q, want acme", a.Portfolio)
	}
	joinPortfolio(t, st, "a", "")
	if a := accountByName(t, st, "a"); a.Portfolio != "" {
		t.Errorf("account a still in %q", a.Portfolio)
	}
}

// TestThroughputCapsTheRate: whatever the tier says, an account's rate and
// burst stay within its number's throughput: 80/s until read or pinned.
func TestThroughputCapsTheRate(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	mustAccount(t, st, "a", campaign.TierNew, limited(500, 300, 100000))
	tests := []struct {
		name      string
		pin       float64
		wantRate  float64
		wantBurst int
		wantTP    float64
	}{
		{"the default 80/s", 0, 80, 80, 80},
		{"pinned higher", 1000, 500, 300, 1000},
		{"pinned lower", 20.5, 20.5, 20, 20.5},
		{"unlimited", campaign.Unlimited, 500, 300, 0},
		{"unpinned again", 0, 80, 80, 80},
	}
	for _, tt := range tests {
		a, err := st.UpdateAccount(t.Context(), "a", AccountChange{Throughput: ptr(tt.pin)})
		if err != nil {
			t.Fatal(err)
		}
		if a.Limits.Rate != tt.wantRate || a.Limits.Burst != tt.wantBurst || a.Throughput != tt.wantTP {
			t.Errorf("%s: rate %v burst %d throughput %v, want %v, %d, %v", tt.name, a.Limits.Rate, a.Limits.Burst,
				a.Throughput, tt.wantRate, tt.wantBurst, tt.wantTP)
		}
	}
	// A change keeps the tokens (20 after the pin at 20.5); a second
	// later the bucket holds its burst of 80, and gets 80 a second.
	c := mustCampaign(t, st, "c", 500)
	cs, err := st.ClaimN(t.Context(), c.ID, "r1", clk.Now().Add(time.Second), 500)
	if err != nil || len(cs) != 80 {
		t.Fatalf("claimed %d (%v), want 80", len(cs), err)
	}
	cs, err = st.ClaimN(t.Context(), c.ID, "r1", clk.Now().Add(2*time.Second), 500)
	if err != nil || len(cs) != 80 {
		t.Fatalf("a second later claimed %d (%v), want 80", len(cs), err)
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
	if cs, err := st.ClaimN(t.Context(), first.ID, "r1", t0, 2); err != nil || len(cs) != 2 {
		t.Fatalf("first: %d claims, %v", len(cs), err)
	}
	im, err := st.Import(t.Context(), campaign.Campaign{Name: "mixed", Fingerprint: "fp-mixed", Source: "mixed.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "hello", Lang: "en_US"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i, p := range []string{phone(7), phone(1)} { // new, then a repeat
		if _, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: p, Phone: p}); err != nil {
			t.Fatal(err)
		}
	}
	mixed, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.ClaimN(t.Context(), mixed.ID, "r1", at(time.Hour), 2)
	if err != nil || len(cs) != 1 || cs[0].Message.Phone != phone(1) {
		t.Fatalf("claimed %v (%v), want the repeat %s alone", cs, err, phone(1))
	}
}
