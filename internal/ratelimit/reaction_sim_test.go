package ratelimit

import (
	"math/rand/v2"
	"testing"
	"time"
)

// simServer answers one request at t: true when it throttles it.
type simServer func(t time.Time) bool

// noiseServer throttles a share p of requests at random, whatever the rate.
func noiseServer(p float64, seed uint64) simServer {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(time.Time) bool { return rng.Float64() < p }
}

// ceilingServer accepts ceiling requests a second (a bucket of one
// second's worth, as the sandbox's) and throttles the rest.
func ceilingServer(ceiling float64, t0 time.Time) simServer {
	l := Limit{Rate: ceiling, Burst: int(ceiling)}
	b := Full(l, t0)
	return func(t time.Time) bool {
		nb, ok := b.TakeAt(l, t, 1)
		b = nb
		return !ok
	}
}

type simResult struct {
	accepted, requests, throttled int
	span                          time.Duration
}

func (r simResult) rate() float64 { return float64(r.accepted) / r.span.Seconds() }
func (r simResult) throttledShare() float64 {
	return float64(r.throttled) / float64(max(r.requests, 1))
}

// simulate sends for d as an engine does: every token of the account's
// bucket (rate × the reaction's factor, a burst of one second) is a request,
// a rest sends nothing, and every answer goes to the reaction. Only what
// happens after warm is counted.
func simulate(srv simServer, rate float64, d, warm time.Duration) (simResult, Reaction) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	r := NewReaction(1, t0)
	burst := int(rate)
	b := Full(Limit{Rate: rate, Burst: burst}, t0)
	var res simResult
	var restUntil time.Time
	for t := t0; t.Before(t0.Add(d)); {
		if t.Before(restUntil) {
			t = restUntil
			continue
		}
		l := Limit{Rate: rate * r.FactorAt(t), Burst: burst}
		next := b.ReadyAt(l, t, 1)
		if next.After(t) {
			t = next
			continue
		}
		b, _ = b.TakeAt(l, t, 1)
		throttled := srv(t)
		if t.Sub(t0) >= warm {
			res.requests++
			if throttled {
				res.throttled++
			} else {
				res.accepted++
			}
		}
		old := l
		v := r.Answer(t, throttled, 0, 30*time.Second)
		if v.Factor > 0 {
			b = b.Relimit(old, Limit{Rate: rate * v.Factor, Burst: burst}, t)
		}
		if v.Rest > 0 {
			restUntil = t.Add(v.Rest)
		}
	}
	res.span = d - warm
	return res, r
}

// TestReactionSimulated runs an account at 30 msg/s for ten simulated
// minutes against the two servers. Random throttling of 2 % (and
// 5 %) does not depend on the rate: the account keeps at least 0.9 of its
// rate. A true ceiling of 20 msg/s (and 10, and 27) is found and held: at
// least 0.85 of the ceiling accepted, at most 2 % of requests throttled.
func TestReactionSimulated(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const rate = 30.0
	for _, p := range []float64{0.02, 0.05} {
		for seed := uint64(1); seed <= 3; seed++ {
			res, r := simulate(noiseServer(p, seed), rate, 10*time.Minute, 0)
			if u := res.rate() / rate; u < 0.9*(1-p) {
				t.Errorf("noise %v, seed %d: %.1f msg/s accepted, %.2f of the rate; want >= 0.9 of what the noise leaves", p, seed, res.rate(), u)
			}
			if n := r.Noise(); n < p/2 || n > 2*p {
				t.Errorf("noise %v, seed %d: learned noise %v", p, seed, n)
			}
			t.Logf("noise %v seed %d: %.1f msg/s (%.2f), throttled %.3f, learned noise %.3f", p, seed, res.rate(), res.rate()/rate, res.throttledShare(), r.Noise())
		}
	}
	for _, ceiling := range []float64{20, 10, 27} {
		// The first seconds find the ceiling; what is judged is holding it.
		res, _ := simulate(ceilingServer(ceiling, t0), rate, 10*time.Minute, 10*time.Second)
		if u := res.rate() / ceiling; u < 0.85 || u > 1.0001 {
			t.Errorf("ceiling %v: %.1f msg/s accepted, %.2f of the ceiling; want >= 0.85", ceiling, res.rate(), u)
		}
		if s := res.throttledShare(); s > 0.02 {
			t.Errorf("ceiling %v: %.3f of requests throttled, want <= 0.02", ceiling, s)
		}
		t.Logf("ceiling %v: %.1f msg/s (%.2f of the ceiling), throttled %.4f", ceiling, res.rate(), res.rate()/ceiling, res.throttledShare())
	}
}
