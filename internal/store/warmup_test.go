package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/storetest"
)

// warmTiers makes the tiers fast with small caps, so a simulated day is a
// few claims: new 5 a day, warm 10, active 20.
func warmTiers(t *testing.T, st *store.Store) {
	t.Helper()
	for name, cap := range map[string]int{campaign.TierNew: 5, campaign.TierWarm: 10, campaign.TierActive: 20} {
		if err := st.SetTier(t.Context(), name, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: cap}); err != nil {
			t.Fatal(err)
		}
	}
}

// sendDay starts a quota day at 00:01 of day d (returning any promotion),
// then at 09:00 sends as many rows as the caps let through, outcome
// deciding each.
func sendDay(t *testing.T, st *store.Store, clk *clock.Sim, id int64, d int, outcome func(i int) campaign.Outcome) (promoted *campaign.TierChange, sent int) {
	t.Helper()
	midnight := time.Date(t0.Year(), t0.Month(), t0.Day()+d, 0, 1, 0, 0, time.UTC)
	clk.Set(midnight)
	resets, err := st.ResetQuota(t.Context(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resets {
		if r.Promoted != nil {
			promoted = r.Promoted
		}
	}
	now := midnight.Add(9 * time.Hour)
	clk.Set(now)
	for i := 0; ; i++ {
		c, err := storetest.One(claim.New(st).ClaimN(t.Context(), id, "r1", now, 1))
		var we *campaign.WaitError
		if errors.As(err, &we) || errors.Is(err, campaign.ErrDone) {
			return promoted, sent
		}
		if err != nil {
			t.Fatal(err)
		}
		o := outcome(i)
		if err := record(t, st, c, o, now); err != nil {
			t.Fatal(err)
		}
		if o.Kind == campaign.OutcomeSent {
			sent++
		}
	}
}

// claimOne claims the campaign's next row for runner r1 at now.
func claimOne(t *testing.T, st *store.Store, id int64, now time.Time) campaign.Claim {
	t.Helper()
	c, err := storetest.One(claim.New(st).ClaimN(t.Context(), id, "r1", now, 1))
	if err != nil {
		t.Fatalf("claim at +%v: %v", now.Sub(t0), err)
	}
	return c
}

// record stores what became of claim c (RecordAll of one).
func record(t *testing.T, st *store.Store, c campaign.Claim, o campaign.Outcome, now time.Time) error {
	return st.RecordAll(t.Context(), "r1", []campaign.Result{{Claim: c, Outcome: o, At: now}})
}

func sentOK(int) campaign.Outcome {
	return campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w", Class: "ok"}
}

// Over simulated weeks a new number that sends its cap every day with no
// trouble is promoted to warm after 7 days in tier, and to active 7 days
// later; each change is in its history with the reason.
func TestWarmupPromotesOverWeeks(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	warmTiers(t, st)
	storetest.MustAccount(t, st, "fresh", campaign.TierNew, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "big", 1000)

	tiers := map[int]string{}
	for d := 1; d <= 16; d++ {
		p, sent := sendDay(t, st, clk, c.ID, d, sentOK)
		a := storetest.AccountByName(t, st, "fresh")
		tiers[d] = a.Tier
		if p != nil {
			t.Logf("day %d: %s → %s: %s", d, p.From, p.To, p.Reason)
		}
		if want := a.Limits.DailyCap; sent != want {
			t.Fatalf("day %d: sent %d, want the %s cap %d", d, sent, a.Tier, want)
		}
	}
	// Added at t0 (day 0, 09:00): 7 days in tier at day 7 09:00, judged at
	// the next reset (day 8, 00:01); warm from then, 7 days on at day 15.
	for d, want := range map[int]string{7: "new", 8: "warm", 14: "warm", 15: "active", 16: "active"} {
		if tiers[d] != want {
			t.Errorf("day %d: tier %s, want %s", d, tiers[d], want)
		}
	}
	h, err := readmodel.New(st).TierHistory(t.Context(), "fresh")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range h {
		got = append(got, c.From+"→"+c.To)
	}
	if fmt.Sprint(got) != "[→new new→warm warm→active]" || !strings.Contains(h[1].Reason, "days at the daily cap of 5") {
		t.Errorf("history %v: %+v", got, h)
	}
}

// A number with 2 % or more permanent failures stays where it is, and its
// progress says why.
func TestWarmupHoldsBackFailures(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	warmTiers(t, st)
	storetest.MustAccount(t, st, "fresh", campaign.TierNew, campaign.Overrides{})
	c := storetest.MustCampaign(t, st, "big", 1000)
	for d := 1; d <= 9; d++ {
		sendDay(t, st, clk, c.ID, d, func(i int) campaign.Outcome {
			if d == 2 && i == 0 {
				return campaign.Outcome{Kind: campaign.OutcomeFailed, Class: "permanent", ErrorCode: 131026, Error: "undeliverable"}
			}
			return sentOK(i)
		})
	}
	if a := storetest.AccountByName(t, st, "fresh"); a.Tier != campaign.TierNew {
		t.Fatalf("tier %s: promoted with a failure share over 2 %%", a.Tier)
	}
	p, err := readmodel.New(st).TierProgress(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if pr := p["fresh"]; pr.Ready || !strings.Contains(pr.Why, "permanent failures") || pr.FullDays < 3 {
		t.Errorf("progress %+v", pr)
	}
}

// A synced quality rating below GREEN holds a promotion back; back at
// GREEN, the next quota reset promotes.
func TestWarmupHoldsBackLowQuality(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	warmTiers(t, st)
	storetest.MustAccount(t, st, "fresh", campaign.TierNew, campaign.Overrides{})
	if _, err := st.RecordSync(t.Context(), "fresh", campaign.NumberInfo{QualityRating: "YELLOW"}); err != nil {
		t.Fatal(err)
	}
	c := storetest.MustCampaign(t, st, "big", 1000)
	for d := 1; d <= 9; d++ {
		sendDay(t, st, clk, c.ID, d, sentOK)
	}
	if a := storetest.AccountByName(t, st, "fresh"); a.Tier != campaign.TierNew {
		t.Fatalf("tier %s: promoted with quality YELLOW", a.Tier)
	}
	p, err := readmodel.New(st).TierProgress(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if pr := p["fresh"]; pr.Ready || !strings.Contains(pr.Why, "quality rating YELLOW") || pr.Quality != "YELLOW" {
		t.Errorf("progress %+v, want held back by quality", pr)
	}
	if _, err := st.RecordSync(t.Context(), "fresh", campaign.NumberInfo{QualityRating: "GREEN"}); err != nil {
		t.Fatal(err)
	}
	sendDay(t, st, clk, c.ID, 10, sentOK)
	if a := storetest.AccountByName(t, st, "fresh"); a.Tier != campaign.TierWarm {
		t.Errorf("tier %s after quality turned GREEN, want warm", a.Tier)
	}
}
