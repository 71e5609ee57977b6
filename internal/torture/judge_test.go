//go:build torture

package torture

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// figures are what every scenario reports, judged from the server's record.
type figures struct {
	requests    int           // requests the server received
	accepted    int           // recipients the server accepted
	sent        int           // rows wasend calls sent
	failed      int           // rows wasend calls failed
	unknown     int           // rows wasend calls unknown
	pending     int           // rows still pending (a run stopped at the caps)
	duplicates  int           // recipients accepted more than once
	lost        int           // rows whose fate wasend got wrong or never settled
	maxOverdraw float64       // tokens beyond a bucket's burst + rate·t, worst window of the server's
	spread      time.Duration // of the time from claim to request; see checkBuckets
	capBreaches int           // messages accepted beyond a daily cap
}

func (f figures) String() string {
	return fmt.Sprintf("requests=%d accepted=%d sent=%d failed=%d unknown=%d pending=%d duplicates=%d lost=%d max_overdraw=%.2f claim_to_request_spread=%v cap_breaches=%d",
		f.requests, f.accepted, f.sent, f.failed, f.unknown, f.pending, f.duplicates, f.lost, f.maxOverdraw, f.spread.Round(time.Millisecond), f.capBreaches)
}

// report logs the figures of a scenario on one line that bench/torture.sh
// collects.
func report(t *testing.T, scenario string, f figures, extra string) {
	t.Helper()
	line := fmt.Sprintf("FIGURES %s [%s]: %s", scenario, size("short", "full"), f)
	if extra != "" {
		line += " " + extra
	}
	t.Log(line)
}

// judge holds wasend's rows up against the server's record once every
// process has ended and fills the figures: nobody accepted twice; a sent
// row was accepted with the same wamid from the same number; a row the
// server accepted that wasend does not call sent is unknown; a failed or
// unknown row says why; no row is left sending, nor pending unless
// allowPending (a run stopped at the caps).
func judge(t *testing.T, rows []row, recs []record, allowPending bool) figures {
	t.Helper()
	f := figures{requests: len(recs)}
	acc := map[string][]record{}
	for _, r := range recs {
		if acceptedOutcome(r.Outcome) {
			acc[r.To] = append(acc[r.To], r)
		}
	}
	f.accepted = len(acc)
	for to, rs := range acc {
		if len(rs) > 1 {
			f.duplicates++
			t.Errorf("recipient %s accepted %d times by the server, at %s and %s", to, len(rs),
				rs[0].At.Format("15:04:05.000"), rs[1].At.Format("15:04:05.000"))
		}
	}
	lost := func(format string, args ...any) {
		f.lost++
		t.Errorf(format, args...)
	}
	inDB := map[string]bool{}
	for _, r := range rows {
		inDB[r.phone] = true
		got := acc[r.phone]
		switch r.state {
		case "sent":
			f.sent++
		case "failed":
			f.failed++
		case "unknown":
			f.unknown++
		case "pending":
			f.pending++
		}
		switch {
		case r.state == "sending" || r.state == "pending" && !allowPending:
			lost("%s: still %s after the last run", r.phone, r.state)
		case r.state == "sent" && len(got) == 0:
			lost("%s: sent in wasend (wamid %s) but never accepted by the server", r.phone, r.wamid)
		case r.state == "sent" && got[0].WAMID != r.wamid:
			lost("%s: wasend's wamid %s, the server's %s", r.phone, r.wamid, got[0].WAMID)
		case r.state == "sent" && got[0].PhoneNumberID != r.phoneNumberID:
			lost("%s: wasend says sent from %s, the server got it from %s", r.phone, r.phoneNumberID, got[0].PhoneNumberID)
		case r.state != "sent" && r.state != "unknown" && len(got) > 0:
			lost("%s: accepted by the server (%s at %s) but %s in wasend; it must be unknown", r.phone,
				got[0].Outcome, got[0].At.Format("15:04:05.000"), r.state)
		case (r.state == "failed" || r.state == "unknown") && r.errorMessage == "":
			lost("%s: %s without a reason", r.phone, r.state)
		}
	}
	for to := range acc {
		if !inDB[to] {
			lost("server accepted %s, which is in no campaign", to)
		}
	}
	if f.sent > f.accepted {
		t.Errorf("wasend counts %d sent, the server accepted only %d recipients", f.sent, f.accepted)
	}
	return f
}

// limit is an account's bucket and daily cap as configured.
type limit struct {
	rate  float64
	burst int
}

// overdraw returns, per phone number id, the worst excess of requests over
// the bucket in any window of the server's timestamps: the number of
// requests in [t_i, t_j] minus burst + rate·(t_j − t_i). Every request
// spends a token, whatever its answer. 0 or less means the bucket held.
func overdraw(recs []record, lim limit) map[string]float64 {
	times := map[string][]time.Time{}
	for _, r := range recs {
		times[r.PhoneNumberID] = append(times[r.PhoneNumberID], r.At)
	}
	out := map[string]float64{}
	for id, ts := range times {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		worst := -float64(lim.burst)
		for i := range ts {
			for j := i; j < len(ts); j++ {
				d := float64(j-i+1) - float64(lim.burst) - lim.rate*ts[j].Sub(ts[i]).Seconds()
				worst = max(worst, d)
			}
		}
		out[id] = worst
	}
	return out
}

// checkBuckets judges the buckets twice and returns the worst overdraw
// the server saw. wasend's claims (attempts.claimed_at) must never overdraw
// a bucket. The server's timestamps may exceed it by one token, plus what
// the spread of the time from claim to request explains: on a loaded
// machine a request that leaves its claim late bunches with the next ones.
// On a quiet machine the spread is a few milliseconds, well under a token.
func checkBuckets(t *testing.T, recs, claims []record, lim limit) (worst float64, spread time.Duration) {
	t.Helper()
	lo, hi := transit(recs, claims)
	spread = max(hi-lo, 0)
	allowed := 1 + lim.rate*spread.Seconds()
	for id, d := range overdraw(recs, lim) {
		worst = max(worst, d)
		if d > allowed {
			t.Errorf("phone number id %s: bucket (rate %g/s, burst %d) overdrawn by %.2f tokens, judged from the server's timestamps; "+
				"claim to request took %v to %v, which explains %.2f",
				id, lim.rate, lim.burst, d, lo, hi, allowed)
		}
	}
	for id, d := range overdraw(claims, lim) {
		if d > 1e-9 {
			t.Errorf("phone number id %s: wasend's claims overdrew the bucket (rate %g/s, burst %d) by %.2f tokens", id, lim.rate, lim.burst, d)
		}
	}
	return worst, spread
}

// checkCaps fails for every account that the server accepted more
// messages from than dailyCap, and returns the messages beyond the caps.
func checkCaps(t *testing.T, recs []record, dailyCap int) int {
	t.Helper()
	breaches := 0
	for id, n := range acceptedBy(recs) {
		if n > dailyCap {
			breaches += n - dailyCap
			t.Errorf("phone number id %s: the server accepted %d messages, daily cap %d", id, n, dailyCap)
		}
	}
	return breaches
}

// transit pairs the k-th request the server received for a message with
// the k-th token wasend claimed for it and returns the longest and the
// shortest time between them: how far the server's timestamps may bunch
// requests that left on schedule.
func transit(recs, claims []record) (lo, hi time.Duration) {
	queue := map[string][]time.Time{}
	for _, c := range claims {
		queue[c.CallbackData] = append(queue[c.CallbackData], c.At)
	}
	lo = time.Duration(1<<63 - 1)
	for _, r := range recs {
		q := queue[r.CallbackData]
		if len(q) == 0 {
			continue
		}
		d := r.At.Sub(q[0])
		queue[r.CallbackData] = q[1:]
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}
