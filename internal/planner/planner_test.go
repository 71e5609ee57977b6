package planner

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func tierAccount(name, tier string, at time.Time) AccountState {
	l := campaign.DefaultTiers[tier]
	lim := ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
	return AccountState{Name: name, Tier: tier, Limit: lim, Bucket: ratelimit.Full(lim, at), DailyCap: l.DailyCap}
}

func account(name string, rate float64, burst, dailyCap int, at time.Time) AccountState {
	lim := ratelimit.Limit{Rate: rate, Burst: burst}
	return AccountState{Name: name, Limit: lim, Bucket: ratelimit.Full(lim, at), DailyCap: dailyCap}
}

func TestPlan(t *testing.T) {
	late := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC)
	plus2 := time.FixedZone("UTC+2", 2*3600)
	used := func(a AccountState, n int) AccountState { a.Used = n; return a }
	notBefore := func(a AccountState, d time.Duration) AccountState { a.NotBefore = a.Bucket.At.Add(d); return a }
	tests := []struct {
		name       string
		in         Input
		wantFinish time.Time
		wantResets int
		wantSent   []int
		wantReason string // capped when set
	}{{
		name: "nothing to send",
		in:   Input{Start: t0, Location: time.UTC, Messages: 0, Accounts: []AccountState{tierAccount("a", campaign.TierActive, t0)}},
		// Finish is the start.
		wantFinish: t0, wantSent: []int{0},
	}, {
		name: "burst then rate",
		// 15 at once, then one every 5 s: the 20th at 25 s.
		in:         Input{Start: t0, Location: time.UTC, Messages: 20, Accounts: []AccountState{tierAccount("a", campaign.TierActive, t0)}},
		wantFinish: t0.Add(25 * time.Second), wantSent: []int{20},
	}, {
		name: "partly empty bucket",
		// 2.5 tokens: 2 at once, the 3rd when 0.5 more came (6 s at 1/12 s), then every 12 s.
		in: Input{Start: t0, Location: time.UTC, Messages: 4, Accounts: []AccountState{{Name: "a",
			Limit: ratelimit.Every(12*time.Second, 5), Bucket: ratelimit.Bucket{Tokens: 2.5, At: t0}, DailyCap: 50}}},
		wantFinish: t0.Add(18 * time.Second), wantSent: []int{4},
	}, {
		name: "daily caps and midnight resets",
		// new tier: 50 a day (5 at once, 45 × 12 s); 120 messages from 23:00
		// take two resets, the last 20 going by 00:03 on day three.
		in:         Input{Start: late, Location: time.UTC, Messages: 120, Accounts: []AccountState{tierAccount("a", campaign.TierNew, late)}},
		wantFinish: time.Date(2026, 3, 4, 0, 3, 0, 0, time.UTC), wantResets: 2, wantSent: []int{120},
	}, {
		name: "cap nearly used",
		// 2 left today; the third waits for midnight.
		in:         Input{Start: t0, Location: time.UTC, Messages: 3, Accounts: []AccountState{used(tierAccount("a", campaign.TierNew, t0), 48)}},
		wantFinish: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), wantResets: 1, wantSent: []int{3},
	}, {
		name: "midnight of the quota time zone",
		// 23:00 UTC is already 01:00 in UTC+2: the reset comes at 22:00 UTC.
		in:         Input{Start: late, Location: plus2, Messages: 3, Accounts: []AccountState{used(tierAccount("a", campaign.TierNew, late), 50)}},
		wantFinish: time.Date(2026, 3, 3, 22, 0, 0, 0, time.UTC), wantResets: 1, wantSent: []int{3},
	}, {
		name: "two accounts share the work",
		// 15 + 5 at once, then 1/5 s and 1/12 s: 20 at 0, then at 5, 10, 12, 15 s.
		in: Input{Start: t0, Location: time.UTC, Messages: 24, Accounts: []AccountState{
			tierAccount("main", campaign.TierActive, t0), tierAccount("fresh", campaign.TierNew, t0)}},
		wantFinish: t0.Add(15 * time.Second), wantSent: []int{18, 6},
	}, {
		name: "global bucket binds",
		// Global 2 at once then one per 2 s: the 10th at 16 s. Both
		// accounts refill in between, so Pick's tie goes to the first.
		in: Input{Start: t0, Location: time.UTC, Messages: 10,
			Accounts: []AccountState{account("a", 1, 10, 1000, t0), account("b", 1, 10, 1000, t0)},
			Global:   &ratelimit.Bucket{Tokens: 2, At: t0}, GlobalLimit: ratelimit.Limit{Rate: 0.5, Burst: 2}},
		wantFinish: t0.Add(16 * time.Second), wantSent: []int{9, 1},
	}, {
		name: "cool-down",
		// Nothing before 30 s; then the full burst and one 5 s later.
		in:         Input{Start: t0, Location: time.UTC, Messages: 16, Accounts: []AccountState{notBefore(tierAccount("a", campaign.TierActive, t0), 30*time.Second)}},
		wantFinish: t0.Add(35 * time.Second), wantSent: []int{16},
	}, {
		name: "cool-down of one account, the other sends",
		in: Input{Start: t0, Location: time.UTC, Messages: 15, Accounts: []AccountState{
			notBefore(tierAccount("main", campaign.TierActive, t0), time.Hour), tierAccount("warm", campaign.TierWarm, t0)}},
		// warm: 8 at once, then 7 × 8 s.
		wantFinish: t0.Add(56 * time.Second), wantSent: []int{0, 15},
	}, {
		name:       "zero caps never finish",
		in:         Input{Start: t0, Location: time.UTC, Messages: 5, Accounts: []AccountState{account("a", 1, 5, 0, t0), account("b", 1, 5, 0, t0)}},
		wantReason: "daily cap is 0", wantSent: []int{0, 0},
	}, {
		name:       "no accounts",
		in:         Input{Start: t0, Location: time.UTC, Messages: 5},
		wantReason: "no usable account",
	}, {
		name: "no rate",
		// Pick never chooses a bucket without a rate, whatever it holds.
		in: Input{Start: t0, Location: time.UTC, Messages: 5, Accounts: []AccountState{{Name: "a",
			Limit: ratelimit.Limit{Rate: 0, Burst: 5}, Bucket: ratelimit.Bucket{Tokens: 3, At: t0}, DailyCap: 10}}},
		wantReason: "no account can send", wantSent: []int{0},
	}, {
		name: "global bucket without rate",
		in: Input{Start: t0, Location: time.UTC, Messages: 5, Accounts: []AccountState{account("a", 1, 5, 100, t0)},
			Global: &ratelimit.Bucket{Tokens: 2, At: t0}, GlobalLimit: ratelimit.Limit{Rate: 0, Burst: 2}},
		wantReason: "global limit", wantSent: []int{0},
	}, {
		name: "runs out of time",
		// One message a day, 50,000 of them.
		in:         Input{Start: t0, Location: time.UTC, Messages: 50000, Accounts: []AccountState{account("a", 1, 1, 1, t0)}},
		wantReason: "100 years",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, stepOnly := range []bool{false, true} {
				s := newSim(tt.in)
				s.stepOnly = stepOnly
				s.run()
				f := s.forecast()
				var sent []int
				for _, sh := range f.PerAccount {
					sent = append(sent, sh.Sent)
				}
				if tt.wantReason != "" {
					if !f.Capped || !strings.Contains(f.Reason, tt.wantReason) || !f.Finish.IsZero() {
						t.Errorf("stepOnly=%v: capped %v, reason %q, finish %v; want capped with %q", stepOnly, f.Capped, f.Reason, f.Finish, tt.wantReason)
					}
				} else {
					if f.Capped || !f.Finish.Equal(tt.wantFinish) || f.Duration != tt.wantFinish.Sub(tt.in.Start) {
						t.Errorf("stepOnly=%v: finish %v (after %v, capped %v %q), want %v", stepOnly, f.Finish, f.Duration, f.Capped, f.Reason, tt.wantFinish)
					}
					if f.QuotaResets != tt.wantResets {
						t.Errorf("stepOnly=%v: %d quota resets, want %d", stepOnly, f.QuotaResets, tt.wantResets)
					}
				}
				if len(tt.wantSent) > 0 && !equalInts(sent, tt.wantSent) {
					t.Errorf("stepOnly=%v: sent %v, want %v", stepOnly, sent, tt.wantSent)
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClosedFormMatchesStepping checks the fast paths — whole days counted
// in closed form, repeating days skipped — against plain stepping with
// Pick, on random accounts.
func TestClosedFormMatchesStepping(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	for n := 0; n < 300; n++ {
		start := time.Date(2026, 3, 27, 0, 0, 0, 0, berlin).Add(time.Duration(rng.Int64N(int64(72 * time.Hour)))) // spans a DST change
		in := Input{Start: start, Location: berlin, Messages: 1 + rng.IntN(3000)}
		for k := rng.IntN(4) + 1; k > 0; k-- {
			rate := 1 / (0.5 + rng.Float64()*20)
			burst := 1 + rng.IntN(20)
			a := AccountState{Name: string(rune('a' + k)), Limit: ratelimit.Limit{Rate: rate, Burst: burst},
				Bucket:   ratelimit.Bucket{Tokens: rng.Float64() * float64(burst), At: start.Add(-time.Duration(rng.Int64N(int64(time.Minute))))},
				DailyCap: rng.IntN(400), Used: rng.IntN(50)}
			if rng.IntN(4) == 0 {
				a.NotBefore = start.Add(time.Duration(rng.Int64N(int64(2 * time.Hour))))
			}
			in.Accounts = append(in.Accounts, a)
		}
		if n%3 == 0 {
			in.Global = &ratelimit.Bucket{Tokens: 1, At: start}
			in.GlobalLimit = ratelimit.Limit{Rate: 1 / (1 + rng.Float64()*5), Burst: 1 + rng.IntN(10)}
		}
		fast := mustPlan(t, in)
		s := newSim(in)
		s.stepOnly = true
		s.run()
		slow := s.forecast()
		// Stepping rounds each wait up to the nanosecond, the closed form
		// once per run: allow a nanosecond per message.
		diff := fast.Finish.Sub(slow.Finish)
		if fast.Capped != slow.Capped || diff < -time.Duration(in.Messages) || diff > time.Duration(in.Messages) || fast.QuotaResets != slow.QuotaResets {
			t.Fatalf("case %d %+v:\nfast %+v\nstep %+v", n, in, fast, slow)
		}
		for i := range fast.PerAccount {
			if d := fast.PerAccount[i].Sent - slow.PerAccount[i].Sent; d < -1 || d > 1 {
				t.Errorf("case %d: shares %v, stepping %v", n, fast.PerAccount, slow.PerAccount)
			}
		}
	}
}

func TestWithExtra(t *testing.T) {
	in := Input{Start: t0, Location: time.UTC, Messages: 2000, Accounts: []AccountState{tierAccount("main", campaign.TierActive, t0)}}
	base := mustPlan(t, in)
	for _, tier := range campaign.TierNames {
		more := WithExtra(in, tier, campaign.DefaultTiers[tier])
		if len(in.Accounts) != 1 || len(more.Accounts) != 2 {
			t.Fatalf("WithExtra changed its input or added %d accounts", len(more.Accounts)-1)
		}
		f := mustPlan(t, more)
		if !f.Finish.Before(base.Finish) {
			t.Errorf("one more %s account: finish %v, not before %v", tier, f.Finish, base.Finish)
		}
		if f.PerAccount[1].Tier != tier || f.PerAccount[1].Sent == 0 {
			t.Errorf("one more %s account: shares %+v", tier, f.PerAccount)
		}
	}
}

func TestRecoveringRate(t *testing.T) {
	a := account("a", 1, 1, 100000, t0)
	healthy := mustPlan(t, Input{Start: t0, Location: time.UTC, Messages: 3000, Accounts: []AccountState{a}})
	a.Health = ratelimit.Health{Factor: 0.5, FactorSince: t0.Add(-ratelimit.QuietPeriod)}
	a.Limit.Rate, a.Bucket.Tokens = 1, 0
	slowed := mustPlan(t, Input{Start: t0, Location: time.UTC, Messages: 3000, Accounts: []AccountState{a}})
	// Half rate climbing back over 5 minutes costs about 75 s.
	lost := slowed.Duration - healthy.Duration
	if lost < 60*time.Second || lost > 90*time.Second {
		t.Errorf("healthy %v, recovering %v: lost %v, want about 75 s", healthy.Duration, slowed.Duration, lost)
	}
}

func TestETA(t *testing.T) {
	accts := []campaign.AccountStatus{
		{Account: campaign.Account{Name: "main", Tier: campaign.TierActive}, Limits: campaign.DefaultTiers[campaign.TierActive], Tokens: 15, At: t0},
		{Account: campaign.Account{Name: "off", Tier: campaign.TierActive, Disabled: true}, Limits: campaign.DefaultTiers[campaign.TierActive], Tokens: 15, At: t0},
		{Account: campaign.Account{Name: "rest", Tier: campaign.TierNew}, Limits: campaign.DefaultTiers[campaign.TierNew], Tokens: 5, At: t0,
			CooldownUntil: t0.Add(time.Hour), RateFactor: 0.5},
	}
	f, err := ETA(t0, time.UTC, Open{Messages: 20}, Limits{Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Finish.Equal(t0.Add(25*time.Second)) || len(f.PerAccount) != 2 || f.PerAccount[0].Sent != 20 {
		t.Errorf("ETA %+v, want main alone done after 25 s", f)
	}
}

func bigInput(n int) Input {
	start := time.Date(2026, 3, 2, 23, 50, 0, 0, time.UTC)
	return Input{Start: start, Location: time.UTC, Messages: n, Accounts: []AccountState{
		tierAccount("fresh", campaign.TierNew, start), tierAccount("warm", campaign.TierWarm, start), tierAccount("main", campaign.TierActive, start)}}
}

func TestPlanMillion(t *testing.T) {
	inputs := map[string]Input{"tiers": bigInput(1_000_000)}
	uncapped := bigInput(1_000_000)
	for i := range uncapped.Accounts {
		uncapped.Accounts[i].DailyCap = 1 << 30
	}
	inputs["uncapped"] = uncapped
	global := bigInput(1_000_000)
	global.Global, global.GlobalLimit = &ratelimit.Bucket{Tokens: 1, At: global.Start}, ratelimit.Limit{Rate: 0.3, Burst: 5}
	inputs["tiers+global"] = global
	for name, in := range inputs {
		began := time.Now()
		f := mustPlan(t, in)
		took := time.Since(began)
		if f.Capped || f.Sent != in.Messages {
			t.Fatalf("%s: %+v", name, f)
		}
		// Speed is BenchmarkPlan1M's to measure; this only reports it.
		t.Logf("%s: 1M messages finish after %v (%d resets), planned in %v", name, f.Duration.Round(time.Hour), f.QuotaResets, took)
	}
	// 500 a day over three tiers: 2,000 days.
	if f := mustPlan(t, bigInput(1_000_000)); f.QuotaResets != 2000 {
		t.Errorf("%d resets, want 2000", f.QuotaResets)
	}
}

func BenchmarkPlan1M(b *testing.B) {
	in := bigInput(1_000_000)
	for b.Loop() {
		Plan(in)
	}
}

func mustPlan(t testing.TB, in Input) Forecast {
	t.Helper()
	f, err := Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
