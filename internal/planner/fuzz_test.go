package planner

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
)

// FuzzPlan forecasts from any state a store can hand over — buckets in
// debt, over their burst or settled before or after the start, caps passed,
// cool-downs, recovering rates, a global bucket, messaging limits, send
// windows, quota days in zones with daylight saving — and holds the
// forecast to its own rules: no panic, no inconsistency, every message
// accounted for, and the fast paths (closed-form days, skipped days) as
// plain stepping finds them. The seed corpus is testdata/fuzz/FuzzPlan.
//
//	go test -run '^$' -fuzz FuzzPlan -fuzztime 3m ./internal/planner
func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x10\x20\x03\x40\x80\x10\x05\x20\x30\x01\x99\x02\x50\x60\x70"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(&fuzzBytes{b: data})
		fc, err := Plan(in)
		if err != nil {
			t.Fatalf("%v\ninput %s", err, describe(in))
		}
		checkForecast(t, in, fc)

		// The closed form and day skipping against plain stepping, where
		// the fast paths apply at all.
		s := newSim(in)
		fast := !s.stepOnly
		s.stepOnly = true
		s.run()
		if s.err != nil {
			t.Fatalf("stepping: %v\ninput %s", s.err, describe(in))
		}
		step := s.forecast()
		if fast {
			// Stepping rounds each wait up to the nanosecond, the closed
			// form once per run: a nanosecond per message. And Pick takes
			// a token epsilon short of whole as whole when it looks, which
			// stepping does at instants the closed form does not see: the
			// time an account earns epsilon in.
			diff, tol := fc.Finish.Sub(step.Finish), time.Duration(max(in.Messages, 0))
			for _, a := range in.Accounts {
				if a.Limit.Rate > 0 {
					tol = max(tol, time.Duration(max(in.Messages, 0))+time.Duration(math.Ceil(epsilon/a.Limit.Rate*float64(time.Second))))
				}
			}
			if fc.Capped != step.Capped || diff < -tol || diff > tol || fc.QuotaResets != step.QuotaResets {
				t.Fatalf("closed form %+v\nstepping %+v\ninput %s", fc, step, describe(in))
			}
			if fc.Capped && fc.Sent != step.Sent {
				t.Fatalf("capped: closed form sends %d, stepping %d\ninput %s", fc.Sent, step.Sent, describe(in))
			}
		}

		// One message fewer never finishes later.
		if in.Messages > 0 && !fc.Capped && in.Window == nil {
			less := in
			less.Messages--
			lf, err := Plan(less)
			if err != nil {
				t.Fatalf("one fewer: %v\ninput %s", err, describe(in))
			}
			if lf.Capped || lf.Finish.After(fc.Finish) {
				t.Fatalf("%d messages finish %v, one fewer %v (capped %v)\ninput %s", in.Messages, fc.Finish, lf.Finish, lf.Capped, describe(in))
			}
		}
	})
}

// checkForecast holds a forecast to the rules any forecast keeps.
func checkForecast(t *testing.T, in Input, fc Forecast) {
	t.Helper()
	if len(fc.PerAccount) != len(in.Accounts) {
		t.Fatalf("%d shares for %d accounts", len(fc.PerAccount), len(in.Accounts))
	}
	sum := 0
	for i, sh := range fc.PerAccount {
		if sh.Sent < 0 || sh.Name != in.Accounts[i].Name {
			t.Fatalf("share %d: %+v\ninput %s", i, sh, describe(in))
		}
		sum += sh.Sent
	}
	if sum != fc.Sent {
		t.Fatalf("shares add up to %d, Sent %d\ninput %s", sum, fc.Sent, describe(in))
	}
	if fc.Capped {
		if fc.Reason == "" || !fc.Finish.IsZero() || fc.Sent >= max(in.Messages, 1) {
			t.Fatalf("capped forecast %+v\ninput %s", fc, describe(in))
		}
		return
	}
	if fc.Sent != max(in.Messages, 0) || fc.Finish.Before(in.Start) || fc.Duration != fc.Finish.Sub(in.Start) || fc.QuotaResets < 0 {
		t.Fatalf("forecast %+v\ninput %s", fc, describe(in))
	}
	if fc.Duration > Horizon+48*time.Hour {
		t.Fatalf("finishes after %v, past the horizon\ninput %s", fc.Duration, describe(in))
	}
}

// fuzzBytes reads numbers from the fuzzer's bytes, zeros once they run out.
type fuzzBytes struct{ b []byte }

func (r *fuzzBytes) u8() uint8 {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *fuzzBytes) u16() uint16 { return uint16(r.u8())<<8 | uint16(r.u8()) }

func (r *fuzzBytes) u32() uint32 {
	var b [4]byte
	for i := range b {
		b[i] = r.u8()
	}
	return binary.BigEndian.Uint32(b[:])
}

// frac is a number in [0, 1].
func (r *fuzzBytes) frac() float64 { return float64(r.u16()) / math.MaxUint16 }

// rate is a rate from about one a day to 1,000/s, evenly in log. (Slower
// rates forecast alike, only with more steps to the horizon.)
func (r *fuzzBytes) rate() float64 { return math.Pow(10, -5+8*r.frac()) }

// offset is a duration in [-span, span], often exactly zero and as often
// as not a small fraction of span (a clock's or a settle's worth).
func (r *fuzzBytes) offset(span time.Duration) time.Duration {
	k := r.u8()
	if k%4 == 0 {
		return 0
	}
	return time.Duration((2*r.frac() - 1) * float64(span) * math.Pow(10, -float64(k%10)))
}

func fuzzZones() []*time.Location {
	zones := []*time.Location{time.UTC, time.FixedZone("UTC+5:30", 5*3600+1800)}
	for _, name := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"} {
		if loc, err := time.LoadLocation(name); err == nil {
			zones = append(zones, loc)
		}
	}
	return zones
}

var zones = fuzzZones()

// fuzzInput builds a planner input from the fuzzer's bytes. Its ranges are
// what stores hold: validated limits (rate > 0 up to far more than Meta
// allows, burst ≥ 1, cap ≥ 0), and what the running system leaves in the
// buckets — debts, tokens over a lowered burst, instants a clock apart.
func fuzzInput(r *fuzzBytes) Input {
	loc := zones[int(r.u8())%len(zones)]
	// Three days around the spring daylight-saving change, to the nanosecond.
	start := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.u32())*time.Second/16384 + time.Duration(r.u16()))
	// Few messages as often as many: a campaign's last rows.
	in := Input{Start: start, Location: loc, Messages: int(r.u16()) % (2 << (r.u8() % 12))}
	if r.u8()%16 == 0 {
		in.Messages = -int(r.u8())
	}
	names := []string{"a", "b", "c", "d"}
	for k := int(r.u8() % 5); k > 0; k-- {
		burst := 1 + int(r.u8()%30)
		if r.u8()%32 == 0 {
			burst = 0
		}
		lim := ratelimit.Limit{Rate: r.rate(), Burst: burst}
		a := AccountState{Name: names[len(in.Accounts)], Limit: lim, DailyCap: int(r.u16() % 700), Used: int(r.u16() % 800)}
		a.Bucket = ratelimit.Bucket{At: start.Add(r.offset(time.Hour))}
		switch r.u8() % 4 {
		case 0: // not one whole token
			a.Bucket.Tokens = r.frac()
		case 1: // a debt, down to a burst (a high-priority campaign borrowed)
			a.Bucket.Tokens = -r.frac() * float64(burst)
		case 2: // up to two over the burst (the burst was lowered)
			a.Bucket.Tokens = float64(burst) + 2*r.frac()
		default:
			a.Bucket.Tokens = r.frac() * float64(burst)
		}
		if r.u8()%4 == 0 {
			a.NotBefore = start.Add(r.offset(3 * time.Hour))
		}
		if r.u8()%4 == 0 {
			a.Health = ratelimit.Health{Factor: ratelimit.MinFactor + r.frac()*(1-ratelimit.MinFactor), FactorSince: start.Add(r.offset(10 * time.Minute))}
			if r.u8()%2 == 0 {
				a.Health.CooldownUntil = start.Add(r.offset(time.Hour))
			}
		}
		in.Accounts = append(in.Accounts, a)
	}
	if r.u8()%3 == 0 {
		in.GlobalLimit = ratelimit.Limit{Rate: r.rate(), Burst: 1 + int(r.u8()%20)}
		in.Global = &ratelimit.Bucket{Tokens: (2*r.frac() - 0.5) * float64(in.GlobalLimit.Burst), At: start.Add(r.offset(time.Minute))}
	}
	if r.u8()%4 == 0 && len(in.Accounts) > 0 {
		p := PortfolioState{Name: "p", Reach: ratelimit.Reach{Limit: int(r.u16() % 2000), Margin: r.frac() * 0.2}}
		for i, a := range in.Accounts {
			if r.u8()%2 == 0 || i == 0 {
				p.Accounts = append(p.Accounts, a.Name)
			}
		}
		for n := int(r.u16() % 300); n > 0; n-- {
			p.Latest = append(p.Latest, start.Add(-time.Duration(r.frac()*float64(30*time.Hour))))
		}
		in.Portfolios = append(in.Portfolios, p)
	}
	if r.u8()%4 == 0 && in.Messages > 0 {
		w := campaign.Window{From: int(r.u16() % 1440), To: int(r.u16() % 1440), Days: r.u8() & campaign.EveryDay}
		if w.Days == 0 {
			w.Days = campaign.EveryDay
		}
		in.Window = &w
		// A few groups, as recipients share a few sets of zones.
		left := in.Messages
		for g := 1 + r.u8()%4; left > 0; g-- {
			n := left
			if g > 1 {
				n = min(left, 1+int(r.u16())%left)
			}
			in.Groups = append(in.Groups, Group{Zones: []*time.Location{zones[int(r.u8())%len(zones)]}, Messages: n})
			left -= n
		}
	}
	return in
}

// describe is an input for a failure message.
func describe(in Input) string {
	s := fmt.Sprintf("start %s in %s, %d messages", in.Start.Format(time.RFC3339Nano), in.Location, in.Messages)
	for _, a := range in.Accounts {
		s += fmt.Sprintf("\n  %+v", a)
	}
	if in.Global != nil {
		s += fmt.Sprintf("\n  global %+v %+v", *in.Global, in.GlobalLimit)
	}
	for _, p := range in.Portfolios {
		s += fmt.Sprintf("\n  portfolio %+v of %v, %d latest", p.Reach, p.Accounts, len(p.Latest))
	}
	if in.Window != nil {
		s += fmt.Sprintf("\n  window %s, groups %+v", in.Window, in.Groups)
	}
	return s
}
