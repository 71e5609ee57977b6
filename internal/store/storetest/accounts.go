package storetest

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Accounts, tiers, the global bucket and the quota day.

func (s suite) accountTests() []sub {
	return []sub{
		{"tier defaults", s.testTierDefaults},
		{"add account", s.testAddAccount},
		{"update account", s.testUpdateAccount},
		{"set tier keeps earned tokens", s.testSetTierKeepsEarnedTokens},
		{"global limit settings", s.testGlobalLimitSettings},
		{"reset quota", s.testResetQuota},
		{"reset quota in the zone of quota days", s.testResetQuotaLocation},
		{"quota days only move forward", s.testQuotaDayOnlyForward},
		{"a failed check is kept until one passes", s.testRecordCheck},
		{"warm-up promotes at a quota reset", s.testWarmupPromotes},
		{"auto-tier demotes on a restriction and a throttle storm", s.testWarmupDemotes},
	}
}

// testWarmupPromotes: a new number that sends its cap every day without
// trouble is promoted to warm by the first quota reset after 7 days in
// its tier (campaign.AssessTier), and not before, on either driver.
func (s suite) testWarmupPromotes(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	const daily = 3
	if err := st.SetTier(t.Context(), campaign.TierNew, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: daily}); err != nil {
		t.Fatal(err)
	}
	MustAccount(t, st, "fresh", campaign.TierNew, campaign.Overrides{}) // at t0, day 0 09:00
	c := MustCampaign(t, st, "warm-up", 100)
	sent := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w", Class: "ok"}
	for d := 1; d <= 8; d++ {
		midnight := time.Date(t0.Year(), t0.Month(), t0.Day()+d, 0, 1, 0, 0, time.UTC)
		clk.Set(midnight)
		resets, err := st.ResetQuota(t.Context(), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		var promoted *campaign.TierChange
		for _, r := range resets {
			if r.Promoted != nil {
				promoted = r.Promoted
			}
		}
		// 7 days in tier at day 7 09:00: judged at day 8's reset.
		if wantUp := d == 8; (promoted != nil) != wantUp || wantUp && (promoted.From != campaign.TierNew || promoted.To != campaign.TierWarm) {
			t.Fatalf("day %d's reset promoted %+v, want new → warm only on day 8", d, promoted)
		}
		if d == 8 {
			break
		}
		now := midnight.Add(9 * time.Hour)
		clk.Set(now)
		for range daily {
			if err := record(t, st, mustClaim(t, st, c.ID, "r", now), "r", sent, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a := AccountByName(t, st, "fresh"); a.Tier != campaign.TierWarm {
		t.Errorf("tier %s after the promotion, want warm", a.Tier)
	}
}

// testRecordCheck: the finding of a failed check is read back with the
// account, and one that passes clears it, code and time too.
func (s suite) testRecordCheck(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	a := MustAccount(t, st, "main", campaign.TierActive, campaign.Overrides{})
	MustAccount(t, st, "other", campaign.TierNew, campaign.Overrides{})
	check := func(when string, want campaign.CheckFinding) {
		t.Helper()
		accts, err := st.Accounts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := accts[0].Check; got.Code != want.Code || got.Error != want.Error || !got.At.Equal(want.At) {
			t.Errorf("%s: main's check %+v, want %+v", when, got, want)
		}
		if accts[1].Check.Failed() {
			t.Errorf("%s: other's check %+v, want none", when, accts[1].Check)
		}
	}
	check("never checked", campaign.CheckFinding{})
	failed := campaign.CheckFinding{Code: 190, Error: "graph error 190 (HTTP 401): Access token has expired", At: at(time.Minute)}
	if err := st.RecordCheck(t.Context(), a.ID, failed); err != nil {
		t.Fatal(err)
	}
	check("after a failed check", failed)
	if err := st.RecordCheck(t.Context(), a.ID, campaign.CheckFinding{Code: 190, At: at(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	check("after a passing check", campaign.CheckFinding{})
}

func (s suite) testTierDefaults(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	tiers, err := readmodel.New(st).Tiers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []campaign.Tier{
		{Name: "new", Limits: campaign.Limits{Rate: 1.0 / 12, Burst: 5, DailyCap: 50}},
		{Name: "warm", Limits: campaign.Limits{Rate: 1.0 / 8, Burst: 8, DailyCap: 150}},
		{Name: "active", Limits: campaign.Limits{Rate: 1.0 / 5, Burst: 15, DailyCap: 300}},
	}
	if len(tiers) != len(want) {
		t.Fatalf("tiers = %+v", tiers)
	}
	for i, w := range want {
		got := tiers[i]
		if got.Name != w.Name || got.Limits.Burst != w.Limits.Burst || got.Limits.DailyCap != w.Limits.DailyCap ||
			math.Abs(got.Limits.Rate-w.Limits.Rate) > 1e-15 {
			t.Errorf("tier %d = %+v, want %+v", i, got, w)
		}
		if got.Defaults != w.Limits {
			t.Errorf("tier %s defaults = %+v, want %+v", w.Name, got.Defaults, w.Limits)
		}
	}
}

func (s suite) testAddAccount(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	a := MustAccount(t, st, "main", campaign.TierActive, campaign.Overrides{})
	clk.Set(at(time.Minute))
	b := MustAccount(t, st, "fresh", campaign.TierNew, campaign.Overrides{Burst: ptr(2)})
	if a.ID == 0 || b.ID <= a.ID || !a.CreatedAt.Equal(t0) {
		t.Errorf("ids %d, %d created %v", a.ID, b.ID, a.CreatedAt)
	}

	accts, err := st.Accounts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(accts) != 2 || accts[0].Name != "main" || accts[1].Name != "fresh" {
		t.Fatalf("accounts = %+v, want main, fresh in order", accts)
	}
	for _, tt := range []struct {
		got        campaign.AccountStatus
		wantLimits campaign.Limits
	}{
		{accts[0], campaign.Limits{Rate: 1.0 / 5, Burst: 15, DailyCap: 300}},
		{accts[1], campaign.Limits{Rate: 1.0 / 12, Burst: 2, DailyCap: 50}},
	} {
		a := tt.got
		if a.Limits != tt.wantLimits {
			t.Errorf("%s limits = %+v, want %+v", a.Name, a.Limits, tt.wantLimits)
		}
		if a.Tokens != float64(tt.wantLimits.Burst) || a.QuotaDay != "2026-03-02" || a.UsedToday != 0 || a.QuotaEpoch != 0 {
			t.Errorf("%s starts with %v tokens, day %s, used %d, epoch %d; want a full bucket on 2026-03-02",
				a.Name, a.Tokens, a.QuotaDay, a.UsedToday, a.QuotaEpoch)
		}
		if a.TokenEnv != "WA_TOKEN_"+strings.ToUpper(a.Name) || a.PhoneNumberID != "pn-"+a.Name {
			t.Errorf("%s stored as %+v", a.Name, a.Account)
		}
	}

	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "main", Tier: campaign.TierNew}); !errors.Is(err, driver.ErrExists) {
		t.Errorf("duplicate name: err = %v, want driver.ErrExists", err)
	}
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "x", Tier: "gold"}); err == nil {
		t.Errorf("unknown tier accepted")
	}
	if _, err := st.Account(t.Context(), "nope"); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("Account(nope) err = %v, want ErrNotFound", err)
	}
}

func (s suite) testUpdateAccount(t *testing.T) {
	warm := campaign.Limits{Rate: 1.0 / 8, Burst: 8, DailyCap: 150}
	tests := []struct {
		name       string
		start      campaign.Overrides
		change     campaign.AccountChange
		wantLimits campaign.Limits
		wantOver   [3]bool // which of rate, burst, cap stay overridden
		wantErr    bool
	}{
		{
			name:       "a rate override wins over the tier",
			change:     campaign.AccountChange{Rate: ptr(2.0)},
			wantLimits: campaign.Limits{Rate: 2, Burst: 8, DailyCap: 150},
			wantOver:   [3]bool{true, false, false},
		},
		{
			name:       "burst and cap overrides",
			change:     campaign.AccountChange{Burst: ptr(3), DailyCap: ptr(20)},
			wantLimits: campaign.Limits{Rate: 1.0 / 8, Burst: 3, DailyCap: 20},
			wantOver:   [3]bool{false, true, true},
		},
		{
			name:       "a daily cap of 0 is an override, not a reset",
			change:     campaign.AccountChange{DailyCap: ptr(0)},
			wantLimits: campaign.Limits{Rate: 1.0 / 8, Burst: 8, DailyCap: 0},
			wantOver:   [3]bool{false, false, true},
		},
		{
			name:       "--reset-limits: rate 0, burst 0, cap -1 clear every override",
			start:      Limited(2, 3, 20),
			change:     campaign.AccountChange{Rate: ptr(0.0), Burst: ptr(0), DailyCap: ptr(-1)},
			wantLimits: warm,
		},
		{
			name:       "negative rate clears only the rate",
			start:      Limited(2, 3, 20),
			change:     campaign.AccountChange{Rate: ptr(-1.0)},
			wantLimits: campaign.Limits{Rate: 1.0 / 8, Burst: 3, DailyCap: 20},
			wantOver:   [3]bool{false, true, true},
		},
		{
			name:       "untouched fields keep their overrides",
			start:      Limited(2, 3, 20),
			change:     campaign.AccountChange{TokenEnv: ptr("OTHER")},
			wantLimits: campaign.Limits{Rate: 2, Burst: 3, DailyCap: 20},
			wantOver:   [3]bool{true, true, true},
		},
		{
			name:       "a tier change keeps overrides over the new tier",
			start:      campaign.Overrides{Rate: ptr(2.0)},
			change:     campaign.AccountChange{Tier: ptr(campaign.TierActive)},
			wantLimits: campaign.Limits{Rate: 2, Burst: 15, DailyCap: 300},
			wantOver:   [3]bool{true, false, false},
		},
		{
			name:    "unknown tier",
			change:  campaign.AccountChange{Tier: ptr("gold")},
			wantErr: true,
		},
		{
			name:    "an absurd rate is rejected",
			change:  campaign.AccountChange{Rate: ptr(1e12)},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := s.openTest(t, newFakeClock())
			MustAccount(t, st, "a", campaign.TierWarm, tt.start)
			before := AccountByName(t, st, "a")
			got, err := st.UpdateAccount(t.Context(), "a", tt.change)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("UpdateAccount succeeded: %+v", got)
				}
				if after := AccountByName(t, st, "a"); after.Limits != before.Limits || after.Tier != before.Tier {
					t.Errorf("a refused change was stored: %+v", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			listed := AccountByName(t, st, "a")
			for _, a := range []campaign.AccountStatus{got, listed} {
				if a.Limits != tt.wantLimits {
					t.Errorf("limits = %+v, want %+v", a.Limits, tt.wantLimits)
				}
				over := [3]bool{a.Overrides.Rate != nil, a.Overrides.Burst != nil, a.Overrides.DailyCap != nil}
				if over != tt.wantOver {
					t.Errorf("overrides set = %v, want %v", over, tt.wantOver)
				}
			}
			if tt.change.TokenEnv != nil && listed.TokenEnv != *tt.change.TokenEnv {
				t.Errorf("token env = %q", listed.TokenEnv)
			}
		})
	}

	st := s.openTest(t, newFakeClock())
	if _, err := st.UpdateAccount(t.Context(), "nope", campaign.AccountChange{}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown account: err = %v, want ErrNotFound", err)
	}
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	if a, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Disabled: ptr(true)}); err != nil || !a.Disabled {
		t.Errorf("disable: %+v, %v", a, err)
	}
}

// testSetTierKeepsEarnedTokens changes a tier's limits while an account of
// that tier refills: tokens earned at the old rate are kept, none are earned
// at the new rate for time before the change.
func (s suite) testSetTierKeepsEarnedTokens(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "n", campaign.TierNew, campaign.Overrides{})                     // 1/12s, burst 5
	MustAccount(t, st, "own", campaign.TierNew, campaign.Overrides{Rate: ptr(1 / 6.0)}) // own rate
	if _, err := st.UpdateAccount(t.Context(), "own", campaign.AccountChange{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "drain", 10)
	for range 5 {
		if _, err := claim(t, st, c.ID, "r", t0); err != nil {
			t.Fatal(err)
		}
	}

	steps := []struct {
		at         time.Duration
		set        *campaign.Limits
		wantTokens float64
		wantOwn    float64 // the account with its own rate
	}{
		{at: 0, wantTokens: 0, wantOwn: 5},
		{at: 6 * time.Second, set: &campaign.Limits{Rate: 1, Burst: 5, DailyCap: 50}, wantTokens: 0.5, wantOwn: 5},
		{at: 7 * time.Second, wantTokens: 1.5, wantOwn: 5},
		{at: 7 * time.Second, set: &campaign.Limits{Rate: 1.0 / 60, Burst: 5, DailyCap: 50}, wantTokens: 1.5, wantOwn: 5},
		{at: 67 * time.Second, wantTokens: 2.5, wantOwn: 5},
		{at: 67 * time.Second, set: &campaign.Limits{Rate: 1.0 / 60, Burst: 2, DailyCap: 50}, wantTokens: 2, wantOwn: 2},
		{at: time.Hour, set: &campaign.Limits{Rate: 1, Burst: 10, DailyCap: 50}, wantTokens: 2, wantOwn: 2},
		{at: time.Hour + 3*time.Second, wantTokens: 5, wantOwn: 2.5},
	}
	for i, s := range steps {
		clk.Set(at(s.at))
		if s.set != nil {
			if err := st.SetTier(t.Context(), campaign.TierNew, *s.set); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		for name, want := range map[string]float64{"n": s.wantTokens, "own": s.wantOwn} {
			if got := AccountByName(t, st, name).Tokens; math.Abs(got-want) > 1e-9 {
				t.Errorf("step %d (+%v): %s has %v tokens, want %v", i, s.at, name, got, want)
			}
		}
	}
	if own := AccountByName(t, st, "own"); own.Limits.Rate != 1/6.0 || own.Limits.Burst != 10 {
		t.Errorf("own limits = %+v, want its rate over the tier's burst", own.Limits)
	}

	if err := st.SetTier(t.Context(), "gold", campaign.Limits{Rate: 1, Burst: 1}); !errors.Is(err, campaign.ErrNotFound) {
		t.Errorf("unknown tier: err = %v, want ErrNotFound", err)
	}
	if err := st.SetTier(t.Context(), campaign.TierNew, campaign.Limits{Rate: 1, Burst: 0}); err == nil {
		t.Errorf("burst 0 accepted")
	}
}

func (s suite) testGlobalLimitSettings(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	if _, _, ok, err := readmodel.New(st).GlobalLimit(t.Context()); err != nil || ok {
		t.Fatalf("fresh database: global on = %v, %v; want off", ok, err)
	}
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Limit{Rate: 1, Burst: 0}); err == nil {
		t.Errorf("burst 0 accepted")
	}
	if err := st.SetGlobalLimit(t.Context(), true, ratelimit.Every(10*time.Second, 3)); err != nil {
		t.Fatal(err)
	}
	l, tokens, ok, err := readmodel.New(st).GlobalLimit(t.Context())
	if err != nil || !ok || l.Burst != 3 || tokens != 3 {
		t.Errorf("after on: %+v %v %v %v; want burst 3, full", l, tokens, ok, err)
	}
	if err := st.SetGlobalLimit(t.Context(), false, ratelimit.Limit{}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := readmodel.New(st).GlobalLimit(t.Context()); ok {
		t.Errorf("still on after off")
	}
}

func (s suite) testResetQuota(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	MustAccount(t, st, "b", campaign.TierNew, campaign.Overrides{})
	c := MustCampaign(t, st, "q", 10)
	for range 3 { // a, b, a: fullest first, ties to the first
		if _, err := claim(t, st, c.ID, "r", t0); err != nil {
			t.Fatal(err)
		}
	}
	day2 := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)

	type acct struct {
		used  int
		epoch int64
	}
	steps := []struct {
		name      string
		at        time.Time
		names     []string
		force     bool
		wantReset map[string]bool // accounts reported, and whether reset
		wantAfter map[string]acct
		wantErr   error
	}{
		{
			name: "same day as the account was added: no-op", at: t0.Add(time.Hour),
			wantReset: map[string]bool{"a": false, "b": false},
			wantAfter: map[string]acct{"a": {2, 0}, "b": {1, 0}},
		},
		{
			name: "force resets anyway", at: t0.Add(time.Hour), names: []string{"a"}, force: true,
			wantReset: map[string]bool{"a": true},
			wantAfter: map[string]acct{"a": {0, 1}, "b": {1, 0}},
		},
		{
			name: "a minute before midnight: still the same day", at: day2.Add(-time.Minute),
			wantReset: map[string]bool{"a": false, "b": false},
			wantAfter: map[string]acct{"a": {0, 1}, "b": {1, 0}},
		},
		{
			name: "midnight: a new day for the named account", at: day2, names: []string{"b"},
			wantReset: map[string]bool{"b": true},
			wantAfter: map[string]acct{"a": {0, 1}, "b": {0, 1}},
		},
		{
			name: "the cron line again: only the account not yet reset", at: day2.Add(time.Minute),
			wantReset: map[string]bool{"a": true, "b": false},
			wantAfter: map[string]acct{"a": {0, 2}, "b": {0, 1}},
		},
		{
			name: "twice more the same day: no-op", at: day2.Add(2 * time.Minute),
			wantReset: map[string]bool{"a": false, "b": false},
			wantAfter: map[string]acct{"a": {0, 2}, "b": {0, 1}},
		},
		{
			name: "an unknown name fails and resets nothing", at: day2.Add(time.Hour), names: []string{"a", "nope"}, force: true,
			wantErr:   campaign.ErrNotFound,
			wantAfter: map[string]acct{"a": {0, 2}, "b": {0, 1}},
		},
	}
	resets := 0
	for _, s := range steps {
		clk.Set(s.at)
		out, err := st.ResetQuota(t.Context(), s.names, s.force)
		if s.wantErr != nil {
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
			}
		} else {
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got := map[string]bool{}
			for _, r := range out {
				got[r.Account] = r.Reset
				if r.Day != s.at.Format(time.DateOnly) {
					t.Errorf("%s: %s reported day %s", s.name, r.Account, r.Day)
				}
				if r.Reset {
					resets++
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(s.wantReset) {
				t.Errorf("%s: reset %v, want %v", s.name, got, s.wantReset)
			}
		}
		for name, want := range s.wantAfter {
			a := AccountByName(t, st, name)
			if a.UsedToday != want.used || a.QuotaEpoch != want.epoch {
				t.Errorf("%s: %s used %d epoch %d, want used %d epoch %d", s.name, name, a.UsedToday, a.QuotaEpoch, want.used, want.epoch)
			}
		}
	}
	if n := CountRows(t, st, `SELECT count(*) FROM quota_resets`); n != resets {
		t.Errorf("quota_resets has %d rows, want %d", n, resets)
	}
	if n := CountRows(t, st, `SELECT count(*) FROM quota_resets WHERE forced = 1`); n != 1 {
		t.Errorf("%d forced resets logged, want 1", n)
	}
}

// testResetQuotaLocation: the quota day follows Config.Location, not UTC.
func (s suite) testResetQuotaLocation(t *testing.T) {
	clk := newFakeClock() // 09:00 UTC = 19:00 at UTC+10
	st := s.openAt(t, s.h.NewDB(t), clk, time.FixedZone("UTC+10", 10*3600))
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	for _, s := range []struct {
		at      time.Duration
		want    bool
		wantDay string
	}{
		{4*time.Hour + 59*time.Minute, false, "2026-03-02"}, // 23:59 local
		{5 * time.Hour, true, "2026-03-03"},                 // local midnight, 14:00 UTC
		{6 * time.Hour, false, "2026-03-03"},
	} {
		clk.Set(at(s.at))
		out, err := st.ResetQuota(t.Context(), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Reset != s.want || out[0].Day != s.wantDay {
			t.Errorf("+%v: %+v, want reset %v on %s", s.at, out, s.want, s.wantDay)
		}
	}
}

// testQuotaDayOnlyForward: with the clock set back behind an account's
// quota day, a reset says Behind and resets nothing; forced, it zeroes the
// count but keeps the day, so no cap is ever doubled.
func (s suite) testQuotaDayOnlyForward(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierNew, campaign.Overrides{})
	c := MustCampaign(t, st, "fwd", 5)
	day2 := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	clk.Set(day2)
	if out, err := st.ResetQuota(t.Context(), nil, false); err != nil || len(out) != 1 || !out[0].Reset || out[0].Day != "2026-03-03" {
		t.Fatalf("reset on day 2: %+v, %v", out, err)
	}
	mustClaim(t, st, c.ID, "r", day2)
	for _, s := range []struct {
		name      string
		force     bool
		wantReset bool
		wantUsed  int
	}{
		{name: "not forced: nothing", wantUsed: 1},
		{name: "forced: the count, not the day", force: true, wantReset: true, wantUsed: 0},
	} {
		clk.Set(t0) // a day back
		out, err := st.ResetQuota(t.Context(), nil, s.force)
		if err != nil || len(out) != 1 {
			t.Fatalf("%s: %+v, %v", s.name, out, err)
		}
		if r := out[0]; !r.Behind || r.Reset != s.wantReset || r.LastDay != "2026-03-03" || r.Day != "2026-03-02" {
			t.Errorf("%s: %+v; want behind, reset %v, last day 2026-03-03", s.name, r, s.wantReset)
		}
		if a := AccountByName(t, st, "a"); a.QuotaDay != "2026-03-03" || a.UsedToday != s.wantUsed {
			t.Errorf("%s: day %s used %d; want 2026-03-03, used %d", s.name, a.QuotaDay, a.UsedToday, s.wantUsed)
		}
	}
}

// testWarmupDemotes: a restriction demotes an auto-tier number at once; so
// does a throttle storm, once an hour; a number with auto-tier off keeps
// its tier (campaign.Demotion), on either driver.
func (s suite) testWarmupDemotes(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	for name, cap := range map[string]int{campaign.TierNew: 5, campaign.TierWarm: 10} {
		if err := st.SetTier(t.Context(), name, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: cap}); err != nil {
			t.Fatal(err)
		}
	}
	MustAccount(t, st, "a", campaign.TierActive, campaign.Overrides{})
	if err := st.SetTier(t.Context(), campaign.TierActive, campaign.Limits{Rate: 1000, Burst: 1000, DailyCap: 1000}); err != nil {
		t.Fatal(err)
	}
	c := MustCampaign(t, st, "big", 500)

	// Requests more than an hour after the account was added, every 13th
	// answered 130429: the 26th request, 2 of 26 throttled (7.7 %, with
	// 20 requests at least), is a storm; none before it is.
	now := at(2 * time.Hour)
	for i := 0; ; i++ {
		clk.Set(now)
		cl := mustClaim(t, st, c.ID, "r1", now)
		o := campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "w", Class: "ok"}
		if i%13 == 12 {
			o = campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, Class: "throttled", ErrorCode: 130429,
				Error: "130429 rate limit hit", Throttle: &campaign.Throttle{Cooldown: time.Nanosecond}}
		}
		if err := record(t, st, cl, "r1", o, now); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		tier := AccountByName(t, st, "a").Tier
		if i < 25 && tier != campaign.TierActive {
			t.Fatalf("demoted to %s after request %d", tier, i+1)
		}
		if i == 25 {
			if tier != campaign.TierWarm {
				t.Fatalf("tier %s after a throttle storm, want warm", tier)
			}
			break
		}
	}
	if _, err := st.ResetQuota(t.Context(), nil, true); err != nil {
		t.Fatal(err)
	}

	// A restriction: one tier down at once.
	cl := mustClaim(t, st, c.ID, "r1", now.Add(time.Minute))
	if err := record(t, st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, ErrorCode: 131048,
		Error: "131048 spam rate limit hit", Restrict: 6 * time.Hour, Class: "restricted"}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	h, _ := readmodel.New(st).TierHistory(t.Context(), "a")
	if a := AccountByName(t, st, "a"); a.Tier != campaign.TierNew || len(h) != 3 ||
		!strings.Contains(h[1].Reason, "throttle storm: 2 of 26 requests") ||
		!strings.Contains(h[2].Reason, "restricted: 131048") {
		t.Errorf("after a restriction: tier %s, history %+v", a.Tier, h)
	}

	// Auto-tier off: kept by hand.
	off := false
	if err := st.SetAutoTier(t.Context(), "a", &off, nil); err != nil {
		t.Fatal(err)
	}
	active := campaign.TierActive
	if _, err := st.UpdateAccount(t.Context(), "a", campaign.AccountChange{Tier: &active}); err != nil {
		t.Fatal(err)
	}
	cl = mustClaim(t, st, c.ID, "r1", now.Add(7*time.Hour))
	if err := record(t, st, cl, "r1", campaign.Outcome{Kind: campaign.OutcomeRetry, RetryAt: now, ErrorCode: 131048,
		Error: "131048 spam rate limit hit", Restrict: time.Second, Class: "restricted"}, now.Add(7*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if a := AccountByName(t, st, "a"); a.Tier != campaign.TierActive {
		t.Errorf("auto-tier off: tier %s, want active kept", a.Tier)
	}
}
