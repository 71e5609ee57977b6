package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// Portfolios and what the Graph API said of the numbers: portfolios added,
// changed and listed with the reach their accounts used, a number's sync
// kept (a field not read keeps its value), the warm-up switch.

func (s suite) portfolioTests() []sub {
	return []sub{
		{"add, update and list", s.testPortfolioManagement},
		{"the reach used and when it frees", s.testPortfolioReach},
		{"a sync keeps what was read", s.testRecordSync},
		{"the warm-up switch", s.testSetAutoTier},
		{"a database's part of a lost quota day", s.testHostPart},
	}
}

func mustPortfolio(t *testing.T, st driver.Driver, name string, limit int, margin float64) {
	t.Helper()
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: name, PinnedLimit: limit, Margin: margin}); err != nil {
		t.Fatal(err)
	}
}

func joinPortfolio(t *testing.T, st driver.Driver, account, portfolio string) {
	t.Helper()
	if _, err := st.UpdateAccount(t.Context(), account, campaign.AccountChange{Portfolio: &portfolio}); err != nil {
		t.Fatal(err)
	}
}

func (s suite) testPortfolioManagement(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	mustPortfolio(t, st, "acme", 2000, 0.05)
	if _, err := st.AddPortfolio(t.Context(), campaign.Portfolio{Name: "acme"}); !errors.Is(err, driver.ErrExists) {
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
	if n := CountRows(t, st, `SELECT count(*) FROM accounts`); n != 0 {
		t.Errorf("a refused account was stored")
	}
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "a", PhoneNumberID: "1", Tier: "new", TokenEnv: "T", Portfolio: "acme"}); err != nil {
		t.Fatal(err)
	}
	MustAccount(t, st, "solo", campaign.TierNew, campaign.Overrides{})
	p, err := st.UpdatePortfolio(t.Context(), "acme", driver.PortfolioChange{PinnedLimit: ptr(10000), Margin: ptr(0.02)})
	if err != nil || p.Name != "acme" || p.PinnedLimit != 10000 || p.Margin != 0.02 || !p.CreatedAt.Equal(t0) {
		t.Errorf("UpdatePortfolio = %+v, %v; want acme at 10000, 2 %%, created at t0", p, err)
	}
	if _, err := st.UpdatePortfolio(t.Context(), "nope", driver.PortfolioChange{Margin: ptr(0.02)}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("update of an unknown portfolio: %v", err)
	}
	if _, err := st.UpdatePortfolio(t.Context(), "acme", driver.PortfolioChange{Margin: ptr(1.5)}); err == nil {
		t.Errorf("a margin of 150 %% accepted")
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
	if p := ps[1]; p.Name != "solo" || !p.Own || p.Limit != 0 || p.Allowed != 0 || p.Margin != driver.DefaultMargin {
		t.Errorf("solo = %+v", p)
	}
	if a := AccountByName(t, st, "a"); a.Portfolio != "acme" {
		t.Errorf("account a in %q, want acme", a.Portfolio)
	}
	joinPortfolio(t, st, "a", "")
	if a := AccountByName(t, st, "a"); a.Portfolio != "" {
		t.Errorf("account a still in %q", a.Portfolio)
	}
}

// testPortfolioReach: the recipients a portfolio's accounts messaged count
// once however many of its numbers messaged them, until the oldest leaves
// the 24 h window; the limit read by a sync applies where it is below the
// pin, and an account without a portfolio is one of its own.
func (s suite) testPortfolioReach(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	mustPortfolio(t, st, "acme", 50, 0)
	for _, name := range []string{"a", "b"} {
		MustAccount(t, st, name, campaign.TierActive, Limited(100, 100, 1000))
		joinPortfolio(t, st, name, "acme")
	}
	if _, err := st.RecordSync(t.Context(), "b", campaign.NumberInfo{MessagingLimit: 4, At: at(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "c", 10)
	cs, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", at(time.Hour), 10)
	if err != nil || len(cs) != 4 {
		t.Fatalf("claimed %d (%v), want the 4 the limit read allows", len(cs), err)
	}
	MustAccount(t, st, "solo", campaign.TierActive, Limited(100, 100, 1000))
	clk.Set(at(2 * time.Hour))
	ps, err := st.Portfolios(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d portfolios, want acme and solo's own: %+v", len(ps), ps)
	}
	acme, solo := ps[0], ps[1]
	if acme.Name != "acme" || acme.Limit != 4 || acme.Allowed != 4 || acme.Used != 4 || acme.ReadLimit != 4 || acme.ReadFrom != "b" ||
		!acme.ReadAt.Equal(at(time.Minute)) || !acme.FreesAt.Equal(at(25*time.Hour)) || !acme.At.Equal(at(2*time.Hour)) || len(acme.Members) != 2 {
		t.Errorf("acme = %+v; want limit 4 read through b, 4 used, freeing 24 h after the claim, 2 members", acme)
	}
	if solo.Name != "solo" || !solo.Own || solo.Used != 0 || !solo.FreesAt.IsZero() || len(solo.Members) != 1 {
		t.Errorf("solo = %+v; want its own, nothing used", solo)
	}
	// A day later the window is empty again.
	clk.Set(at(26 * time.Hour))
	if ps, err = st.Portfolios(t.Context()); err != nil || ps[0].Used != 0 {
		t.Errorf("a day later: %+v, %v; want nothing used", ps[0], err)
	}
}

// testRecordSync: a sync keeps the number's quality, name, throughput
// (which then bounds the rate) and the portfolio's limit; a field not read
// keeps the value it had.
func (s suite) testRecordSync(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, Limited(500, 300, 1000))
	if _, err := st.RecordSync(t.Context(), "nope", campaign.NumberInfo{}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("sync of an unknown account: %v, want ErrNotFound", err)
	}
	a, err := st.RecordSync(t.Context(), "a", campaign.NumberInfo{QualityRating: "GREEN", Throughput: 200, MessagingLimit: 1000,
		VerifiedName: "Acme", NameStatus: "APPROVED", At: at(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Synced.QualityRating != "GREEN" || a.Synced.MessagingLimit != 1000 || a.Synced.VerifiedName != "Acme" ||
		a.Synced.NameStatus != "APPROVED" || !a.Synced.At.Equal(at(time.Minute)) || a.ThroughputRead != 200 || a.Limits.Rate != 200 {
		t.Errorf("after a sync: %+v; want GREEN, 1000, Acme, APPROVED, read at +1m, 200 msg/s bounding the rate", a)
	}
	clk.Set(at(time.Hour))
	a, err = st.RecordSync(t.Context(), "a", campaign.NumberInfo{QualityRating: "YELLOW"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Synced.QualityRating != "YELLOW" || a.Synced.MessagingLimit != 1000 || a.ThroughputRead != 200 || !a.Synced.At.Equal(at(time.Hour)) {
		t.Errorf("after a sync reading only the quality: %+v; want YELLOW, the limit and throughput kept, read now", a)
	}
	if got := AccountByName(t, st, "a"); got.Synced.QualityRating != "YELLOW" || !got.Synced.At.Equal(at(time.Hour)) || got.ThroughputRead != 200 {
		t.Errorf("Accounts reads %+v, the sync returned %+v", got.Synced, a.Synced)
	}
}

// testSetAutoTier: the warm-up switch and the time to promotion are kept
// and logged; a switch to what is already set logs nothing.
func (s suite) testSetAutoTier(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	logged := func() int {
		return CountRows(t, st, `SELECT count(*) FROM tier_changes WHERE account_id = (SELECT id FROM accounts WHERE name = 'a')`)
	}
	before := logged()
	read := func() (on bool, after time.Duration) {
		t.Helper()
		var auto, ns int64
		if err := checked(st).QueryRowContext(t.Context(), `SELECT auto_tier, promote_after FROM accounts WHERE name = ?`, "a").Scan(&auto, &ns); err != nil {
			t.Fatal(err)
		}
		return auto != 0, time.Duration(ns)
	}
	if on, _ := read(); !on {
		t.Fatal("a new account's warm-up is off")
	}
	if err := st.SetAutoTier(t.Context(), "a", ptr(false), ptr(14*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if on, after := read(); on || after != 14*24*time.Hour || logged() != before+1 {
		t.Errorf("after off and 14 days: on %v, after %v, %d logged; want off, 336h, one more", on, after, logged()-before)
	}
	if err := st.SetAutoTier(t.Context(), "a", ptr(false), nil); err != nil {
		t.Fatal(err)
	}
	if on, after := read(); on || after != 14*24*time.Hour || logged() != before+1 {
		t.Errorf("off again: on %v, after %v, %d logged; want nothing changed", on, after, logged()-before)
	}
	if err := st.SetAutoTier(t.Context(), "a", nil, ptr(-time.Hour)); err == nil {
		t.Error("a negative time to promotion accepted")
	}
	if err := st.SetAutoTier(t.Context(), "nope", ptr(true), nil); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown account: %v, want ErrNotFound", err)
	}
}

// testHostPart: what a forced quota reset under shared limits rebuilds a
// portfolio's day from is this database's part: its accounts' counts, the
// recipients they messaged in the last 24 h, and the repeat guards their
// messages sent or in flight hold. The database is one host, whichever
// handle asks.
func (s suite) testHostPart(t *testing.T) {
	clk := newFakeClock()
	db := s.h.NewDB(t)
	st, other := s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)
	mustPortfolio(t, st, "acme", 0, 0)
	a := MustAccount(t, st, "a", campaign.TierActive, Limited(100, 100, 1000))
	joinPortfolio(t, st, "a", "acme")
	c := MustCampaign(t, st, "c", 3)
	cs, err := ledger(st).ClaimN(t.Context(), c.ID, "r1", at(time.Hour), 3)
	if err != nil || len(cs) != 3 {
		t.Fatalf("claimed %d (%v), want 3", len(cs), err)
	}
	if err := record(t, st, cs[0], "r1", campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.0", Class: "ok"}, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(2 * time.Hour))
	today := campaign.QuotaDay(clk.Now(), time.UTC)
	r, err := st.HostPart(t.Context(), "acme", today)
	if err != nil {
		t.Fatal(err)
	}
	if r.Host == "" || r.Today != today || !r.Now.Equal(clk.Now()) {
		t.Errorf("request %q on %s at %v; want a host id, today, now", r.Host, r.Today, r.Now)
	}
	if len(r.Accounts) != 1 || r.Accounts[0].Account != a.PhoneNumberID || r.Accounts[0].Used != 3 || r.Accounts[0].Day != today {
		t.Errorf("accounts %+v; want a's number with 3 used today", r.Accounts)
	}
	var window, guarded []string
	for _, w := range r.Window {
		window = append(window, w.Recipient)
		if w.Account != a.PhoneNumberID || !w.At.Equal(at(time.Hour)) {
			t.Errorf("contact %+v; want from a's number at the claim", w)
		}
	}
	want := []string{Phone(0), Phone(1), Phone(2)}
	if slices.Sort(window); !slices.Equal(window, want) {
		t.Errorf("window %v, want %v", window, want)
	}
	for _, g := range r.Guards {
		guarded = append(guarded, g.Recipient)
		if g.Guard == "" || g.Guard != r.Guards[0].Guard || g.At.IsZero() {
			t.Errorf("guard %+v; want the campaign's one guard, dated", g)
		}
	}
	if slices.Sort(guarded); !slices.Equal(guarded, want) {
		t.Errorf("guards for %v, want %v (sent and in flight)", guarded, want)
	}
	r2, err := other.HostPart(t.Context(), driver.DefaultPortfolio, today)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Host != r.Host || len(r2.Accounts) != 0 || len(r2.Window) != 0 || len(r2.Guards) != 0 {
		t.Errorf("the default portfolio from another handle: %+v; want the same host, nothing of acme's", r2)
	}
}
