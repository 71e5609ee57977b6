package redisgate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/limits"
	"github.com/wasend/wasend/internal/limits/limitstest"
	"github.com/wasend/wasend/internal/ratelimit"
)

// TestDifferentialWithReference holds admit.lua to limits.Decide, through
// the reference model (Decide on maps): it drives the Redis gate and the
// reference model with the same seeded random admissions (to a few recipients, under
// a reach, a pair gap and stickiness of the seed's, from two hosts with
// repeat guards on two messages), refunds, losses of the state rebuilt
// from the hosts' parts, rate changes,
// resets and jumps of hours at the same instants, and holds every answer
// equal: the Lua is ratelimit's arithmetic, not an approximation of it.
func TestDifferentialWithReference(t *testing.T) {
	s := startRedis(t)
	newRedis := newRedisHarness(s)
	seen := map[string]int{} // what the seeds exercised, over all of them
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xd1ff))
			now := limitstest.T0
			ref := limits.NewReference(func() time.Time { return now })
			rh := newRedis(t)
			gates := []limits.Gate{ref, rh.Gate()}
			ctx := context.Background()

			randLimit := func() ratelimit.Limit {
				return ratelimit.Limit{Rate: []float64{0.05, 1.0 / 12, 0.5, 1, 3, 7.5}[r.IntN(6)], Burst: r.IntN(6)}
			}
			accts := make([]limits.Account, 3)
			for i := range accts {
				accts[i] = limits.Account{Name: fmt.Sprint("n", i), Limit: randLimit(), DailyCap: r.IntN(15)}
			}
			var global *ratelimit.Limit
			if r.IntN(2) == 0 {
				l := randLimit()
				global = &l
			}
			reach := ratelimit.Reach{Limit: []int{0, 2, 3, 4}[r.IntN(4)], Margin: []float64{0, 0.25}[r.IntN(2)]}
			pairGap := []time.Duration{0, 2 * time.Second, 20 * time.Second}[r.IntN(3)]
			sticky := []time.Duration{0, 30 * time.Second, 10 * time.Minute}[r.IntN(3)]
			rules := reach.Limited() || pairGap > 0 || sticky > 0
			names := []string{"n0", "n1", "n2"}
			for _, g := range gates {
				if _, err := g.ResetQuota(ctx, limits.ResetRequest{Accounts: names, Today: limitstest.Today, Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			var claims []limits.Claim
			// rebuild adds host's part, random but alike for both gates,
			// read on a host clock up to ten minutes off.
			rebuild := func(where, host string) {
				skew := time.Duration(r.IntN(1200)-600) * time.Second
				part := limits.RebuildRequest{Host: host, Today: limitstest.Today, Now: now.Add(skew)}
				for _, n := range names {
					part.Accounts = append(part.Accounts, limits.RebuildCount{Account: n, Day: limitstest.Today, Used: r.IntN(4)})
				}
				for range r.IntN(4) {
					at := now.Add(skew - time.Duration(r.IntN(30*3600))*time.Second)
					to := fmt.Sprint("+155500000", r.IntN(6))
					part.Window = append(part.Window, limits.RebuildContact{Recipient: to, Account: names[r.IntN(3)], At: at})
					if r.IntN(2) == 0 {
						part.Guards = append(part.Guards, limits.RebuildGuard{Recipient: to, Guard: fmt.Sprint("t:m", 1+r.IntN(2)), At: at})
					}
				}
				var got [2]limits.RebuildResult
				for i, g := range gates {
					res, err := g.Rebuild(ctx, part)
					if err != nil {
						t.Fatalf("%s: gate %d rebuild: %v", where, i, err)
					}
					got[i] = res
				}
				if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
					t.Fatalf("%s: rebuild by %s: reference %+v, Redis %+v", where, host, got[0], got[1])
				}
			}
			for step := range 300 {
				now = now.Add(time.Duration(r.IntN(1500)) * time.Millisecond)
				// Jumps of hours move the reach window; they stop before claims
				// expire (48 h), which Redis counts on its own clock, not the pinned one.
				if r.IntN(40) == 0 && now.Sub(limitstest.T0) < 36*time.Hour {
					now = now.Add(time.Duration(1+r.IntN(9)) * time.Hour)
				}
				rh.SetNow(now)
				where := fmt.Sprintf("step %d (+%v)", step, now.Sub(limitstest.T0))
				switch op := r.IntN(20); {
				case op < 14:
					offer := make([]limits.Account, 0, 3)
					for _, i := range r.Perm(3)[:1+r.IntN(3)] {
						a := accts[i]
						a.Demoted = r.IntN(5) == 0
						offer = append(offer, a)
					}
					req := limits.Request{ClaimID: fmt.Sprint("c", step), Accounts: offer, Global: global, Today: limitstest.Today,
						Reach: reach, PairGap: pairGap, Sticky: sticky}
					// Two hosts, two messages: the repeat guard across hosts.
					req.Host = fmt.Sprint("h", r.IntN(2))
					if rules || r.IntN(4) > 0 {
						req.Recipient = fmt.Sprint("+155500000", r.IntN(6))
						if g := r.IntN(3); g > 0 {
							req.Guard = fmt.Sprint("t:m", g)
						}
					}
					var got [2]limits.Admission
					var errs [2]error
					for i, g := range gates {
						got[i], errs[i] = g.Admit(ctx, req)
					}
					if errors.Is(errs[0], limits.ErrRebuild) && errors.Is(errs[1], limits.ErrRebuild) {
						// A rebuilt state: this host adds its part first.
						rebuild(where, req.Host)
						seen["rebuild by a second host"]++
						continue
					}
					for i, err := range errs {
						if err != nil {
							t.Fatalf("%s: gate %d: %v", where, i, err)
						}
					}
					ra, rd := got[0], got[1]
					if ra.OK != rd.OK || ra.Claim != rd.Claim || ra.Index != rd.Index || ra.Used != rd.Used ||
						math.Abs(ra.Tokens-rd.Tokens) > 1e-9 || ra.Reason != rd.Reason || !ra.At.Equal(rd.At) ||
						ra.StickyAccount != rd.StickyAccount || ra.StickyBroken != rd.StickyBroken {
						t.Fatalf("%s: reference %+v, Redis %+v", where, ra, rd)
					}
					if d := rd.Until.Sub(ra.Until); ra.Until.IsZero() != rd.Until.IsZero() || d < 0 || d > time.Microsecond {
						t.Fatalf("%s: until: reference %v, Redis %v", where, ra.Until, rd.Until)
					}
					if ra.OK {
						claims = append(claims, ra.Claim)
					}
					switch {
					case ra.StickyBroken:
						seen["sticky broken"]++
					case ra.StickyAccount != "":
						seen["sticky kept"]++
					case !ra.OK:
						seen[string(ra.Reason)]++
					}
				case op < 16 && len(claims) > 0:
					c := claims[r.IntN(len(claims))]
					if r.IntN(2) == 0 {
						c = limits.Claim{ID: c.ID} // as a lapsed claim's refund names it
					}
					var got [2]limits.RefundResult
					for i, g := range gates {
						res, err := g.Refund(ctx, c)
						if err != nil {
							t.Fatalf("%s: gate %d refund: %v", where, i, err)
						}
						got[i] = res
					}
					if got[0] != got[1] {
						t.Fatalf("%s: refund %s: reference %v, Redis %v", where, c.ID, got[0], got[1])
					}
					seen[got[0].String()]++
				case op == 16 && r.IntN(8) == 0:
					// Redis loses its data; a host's part rebuilds the day.
					ref.LoseState()
					rh.LoseState()
					rebuild(where, fmt.Sprint("h", r.IntN(2)))
					seen["lost and rebuilt"]++
				case op < 18:
					i := r.IntN(3)
					accts[i].Limit, accts[i].DailyCap = randLimit(), r.IntN(15)
				default:
					req := limits.ResetRequest{Accounts: names[:1+r.IntN(3)], Today: limitstest.Today, Force: r.IntN(2) == 0}
					var got [2][]limits.Reset
					for i, g := range gates {
						rs, err := g.ResetQuota(ctx, req)
						if err != nil {
							t.Fatalf("%s: gate %d reset: %v", where, i, err)
						}
						got[i] = rs
					}
					if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
						t.Fatalf("%s: reset: reference %+v, Redis %+v", where, got[0], got[1])
					}
				}
			}
			var st [2]limits.State
			for i, g := range gates {
				var err error
				if st[i], err = g.State(ctx, accts, global); err != nil {
					t.Fatal(err)
				}
			}
			if st[0].Reach.Used != st[1].Reach.Used || !st[0].Reach.Oldest.Equal(st[1].Reach.Oldest) {
				t.Fatalf("final window: reference %+v, Redis %+v", st[0].Reach, st[1].Reach)
			}
			for i := range accts {
				a, b := st[0].Accounts[i], st[1].Accounts[i]
				if a.Day != b.Day || a.Used != b.Used || math.Abs(a.Tokens-b.Tokens) > 1e-9 {
					t.Fatalf("final state of %s: reference %+v, Redis %+v", a.Name, a, b)
				}
			}
		})
	}
	for _, what := range []string{"pair", "reach", "tokens", "capped", "sticky kept", "sticky broken", "refunded", "elsewhere",
		"lost and rebuilt", "rebuild by a second host"} {
		if seen[what] == 0 {
			t.Errorf("no seed exercised %q: %v", what, seen)
		}
	}
}
