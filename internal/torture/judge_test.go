//go:build torture

package torture

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
)

// figures are what every scenario reports, judged from the server's record.
type figures struct {
	requests    int     // requests the server received
	accepted    int     // recipients the server accepted
	sent        int     // rows wasend calls sent
	failed      int     // rows wasend calls failed
	unknown     int     // rows wasend calls unknown
	pending     int     // rows still pending (a run stopped at the caps)
	duplicates  int     // recipients accepted more than once
	lost        int     // rows whose fate wasend got wrong or never settled
	buckets     buckets // worst overdraws; see checkBuckets
	capBreaches int     // messages accepted beyond a daily cap
}

func (f figures) String() string {
	return fmt.Sprintf("requests=%d accepted=%d sent=%d failed=%d unknown=%d pending=%d duplicates=%d lost=%d max_overdraw=%.2f (unexplained by claim times %.2f, by claims %.2f) cap_breaches=%d",
		f.requests, f.accepted, f.sent, f.failed, f.unknown, f.pending, f.duplicates, f.lost, f.buckets.server, f.buckets.unexplained, f.buckets.claims, f.capBreaches)
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
	acc := testproc.Accepted(recs)
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
		inDB[r.Phone] = true
		got := acc[r.Phone]
		switch r.State {
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
		case r.State == "sending" || r.State == "pending" && !allowPending:
			lost("%s: still %s after the last run", r.Phone, r.State)
		case r.State == "sent" && len(got) == 0:
			lost("%s: sent in wasend (wamid %s) but never accepted by the server", r.Phone, r.WAMID)
		case r.State == "sent" && got[0].WAMID != r.WAMID:
			lost("%s: wasend's wamid %s, the server's %s", r.Phone, r.WAMID, got[0].WAMID)
		case r.State == "sent" && got[0].PhoneNumberID != r.PhoneNumberID:
			lost("%s: wasend says sent from %s, the server got it from %s", r.Phone, r.PhoneNumberID, got[0].PhoneNumberID)
		case r.State != "sent" && r.State != "unknown" && len(got) > 0:
			lost("%s: accepted by the server (%s at %s) but %s in wasend; it must be unknown", r.Phone,
				got[0].Outcome, got[0].At.Format("15:04:05.000"), r.State)
		case (r.State == "failed" || r.State == "unknown") && r.ErrorMessage == "":
			lost("%s: %s without a reason", r.Phone, r.State)
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

// limit is an account's bucket as configured.
type limit struct {
	rate  float64
	burst int
}

// overdraw returns the worst excess of requests over the bucket in any
// window of sorted times: the count in [t_i, t_j] minus
// burst + rate·(t_j − t_i). 0 or less means the bucket held.
func overdraw(ts []time.Time, lim limit) float64 {
	worst := 0.0
	for i := range ts {
		for j := i; j < len(ts); j++ {
			worst = max(worst, float64(j-i+1)-float64(lim.burst)-lim.rate*ts[j].Sub(ts[i]).Seconds())
		}
	}
	return worst
}

// buckets are the figures of checkBuckets.
type buckets struct {
	server      float64 // worst overdraw by the server's timestamps
	unexplained float64 // of it, what the claims' own times don't explain
	claims      float64 // worst overdraw by wasend's claims
}

// checkBuckets judges each account's bucket from the server's record.
// Every request spends a token, whatever its answer, so every request
// counts. A request reaches the server a little after wasend claimed its
// token, on a loaded machine sometimes much later, and then bunches with
// the next ones; so each window of requests at the server may exceed the
// bucket by one token plus what the claim times of those same requests
// explain (rate × how much wider their claims spread than their arrivals).
// wasend's claims themselves (attempts.claimed_at) must never overdraw.
func checkBuckets(t *testing.T, recs, claims []record, lim limit) buckets {
	t.Helper()
	queue := map[string][]record{}
	claimTimes := map[string][]time.Time{}
	for _, c := range claims {
		queue[c.CallbackData] = append(queue[c.CallbackData], c)
		claimTimes[c.PhoneNumberID] = append(claimTimes[c.PhoneNumberID], c.At)
	}
	type arrival struct{ at, claimed time.Time }
	arrivals := map[string][]arrival{}
	for _, r := range recs {
		q := queue[r.CallbackData]
		if len(q) == 0 {
			t.Errorf("request to %s (%s) from %s at %s: wasend claimed no token for it", r.To, r.CallbackData,
				r.PhoneNumberID, r.At.Format("15:04:05.000"))
			continue
		}
		c := q[0]
		queue[r.CallbackData] = q[1:]
		if c.PhoneNumberID != r.PhoneNumberID {
			t.Errorf("request to %s (%s): sent from %s, its token claimed on %s", r.To, r.CallbackData, r.PhoneNumberID, c.PhoneNumberID)
		}
		arrivals[r.PhoneNumberID] = append(arrivals[r.PhoneNumberID], arrival{r.At, c.At})
	}
	var b buckets
	for id, as := range arrivals {
		slices.SortFunc(as, func(x, y arrival) int { return x.at.Compare(y.at) })
		worst, unexplained := 0.0, 0.0
		for i := range as {
			lo, hi := as[i].claimed, as[i].claimed
			for j := i; j < len(as); j++ {
				lo, hi = minTime(lo, as[j].claimed), maxTime(hi, as[j].claimed)
				span := as[j].at.Sub(as[i].at)
				d := float64(j-i+1) - float64(lim.burst) - lim.rate*span.Seconds()
				worst = max(worst, d)
				unexplained = max(unexplained, d-lim.rate*max(hi.Sub(lo)-span, 0).Seconds())
			}
		}
		b.server, b.unexplained = max(b.server, worst), max(b.unexplained, unexplained)
		if unexplained > 1 {
			t.Errorf("phone number id %s: bucket (rate %g/s, burst %d) overdrawn by %.2f tokens at the server, %.2f of them not explained by when wasend claimed the tokens",
				id, lim.rate, lim.burst, worst, unexplained)
		}
	}
	for id, ts := range claimTimes {
		slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
		d := overdraw(ts, lim)
		b.claims = max(b.claims, d)
		if d > 1e-9 {
			t.Errorf("phone number id %s: wasend's claims overdrew the bucket (rate %g/s, burst %d) by %.2f tokens", id, lim.rate, lim.burst, d)
		}
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
