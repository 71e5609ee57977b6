//go:build torture

package torture

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/testproc"
)

// TestTwoHostsOneRedis: two hosts — each its own database — run the same
// file without --shard against one sandbox, sharing their numbers' limits
// through one Redis, and are killed with SIGKILL at seeded random moments
// and started again until each has finished or stopped at the caps. Judged
// by the sandbox's record: nobody accepted twice (each recipient is sent by
// one host; the other skips it with code -2), no number beyond its daily
// cap, no bucket overdrawn by the claims of both hosts together.
func TestTwoHostsOneRedis(t *testing.T) {
	var (
		n     = size(300, 1500)
		kills = size(4, 16)
		// Slow enough that the list outlasts the pair gap (6 s): a host
		// that sent the others' recipients again would do so by then.
		lim = limit{rate: 10, burst: 5}
		// Three numbers whose caps take the list once, not twice: a host
		// sending the others' recipients again would run into them, and
		// the judge counts what went beyond.
		dailyCap = n * 11 / 30
	)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	r := redistest.Start(t)
	first := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed),
		"--slow", "0.1", "--slow-delay", "200ms", "--drop", "0.02", "--server-error", "0.02")
	second := &world{World: testproc.New(t, testproc.Options{TokenEnv: tokenEnv, Timeout: first.Timeout, Poll: first.Poll}), api: first.api}
	second.APIBase = first.APIBase
	hosts := []*world{first, second}
	for _, h := range hosts {
		h.Extra = append(h.Extra, "WASEND_LIMITS="+r.URL())
		h.setup(lim.rate, lim.burst, dailyCap, threeAccounts)
	}
	csv := first.WriteCSV("hosts.csv", 4915112350000, n)
	first.OK("quota", "reset", "--force")
	run := runArgs(csv, "--stop-when-capped")

	start := time.Now()
	type host struct {
		p    *testproc.Proc
		runs int
		done bool
	}
	state := make([]host, len(hosts))
	startHost := func(i int) {
		state[i].p = hosts[i].Start(run...)
		state[i].runs++
	}
	for i := range hosts {
		startHost(i)
	}
	killed, midCampaign := 0, 0
	for killed < kills {
		// Kill one host, chosen at random, at a random moment; start it again.
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		var open []int
		for i := range hosts {
			if !state[i].done {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			break
		}
		i := open[rng.IntN(len(open))]
		select {
		case <-state[i].p.Done():
		default:
			state[i].p.Signal(t, syscall.SIGKILL)
		}
		res := state[i].p.Wait(t)
		checkOutput(t, fmt.Sprintf("host %d run %d", i+1, state[i].runs), res)
		if res.Signal == syscall.SIGKILL {
			killed++
			got := testproc.States(hosts[i].Rows())
			if got["sent"] > 0 && got["pending"]+got["sending"] > 0 {
				midCampaign++
			}
			t.Logf("kill %d: host %d, rows %v", killed, i+1, got)
			startHost(i)
			continue
		}
		if res.Code != 0 && res.Code != 3 {
			t.Fatalf("host %d run %d: %s", i+1, state[i].runs, res)
		}
		state[i].done = true
	}
	for i := range hosts {
		if state[i].done {
			continue
		}
		res := state[i].p.Wait(t)
		checkOutput(t, fmt.Sprintf("host %d run %d", i+1, state[i].runs), res)
		if res.Code != 0 && res.Code != 3 {
			t.Fatalf("host %d's last run: %s", i+1, res)
		}
	}
	// A run that stops at the caps right after a kill leaves the killed
	// run's rows sending until its heartbeat is old enough to rescue them
	// (issue 23, finding 23): run again until a run has rescued them.
	for i, h := range hosts {
		deadline := time.Now().Add(2 * time.Minute)
		for testproc.States(h.Rows())["sending"] > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("host %d: rows still sending two minutes after its last run", i+1)
			}
			time.Sleep(2 * time.Second)
			res := h.Run(run...)
			if res.Code != 0 && res.Code != 3 {
				t.Fatalf("host %d, a run to rescue a killed run's rows: %s", i+1, res)
			}
		}
	}
	elapsed := time.Since(start)
	if midCampaign == 0 {
		t.Fatal("no host was killed while sending; the test proved nothing")
	}

	recs := first.api.Records(t)
	// Each recipient is one host's: the other skipped it, naming why.
	var rows []row
	owner := map[string]int{}
	skipped := 0
	for i, h := range hosts {
		h.CheckCounts("the last run")
		for _, rw := range h.Rows() {
			if rw.State == "failed" && rw.ErrorCode == campaign.CodeElsewhere {
				skipped++
				continue
			}
			if j, ok := owner[rw.Phone]; ok && rw.State != "pending" {
				t.Errorf("%s: %s on host %d, and host %d has it too", rw.Phone, rw.State, i+1, j+1)
			}
			if rw.State != "pending" {
				owner[rw.Phone] = i
			}
			rows = append(rows, rw)
		}
	}
	// A row pending on one host may be another's in the judge's eyes:
	// only the sending host's rows are held up against the record.
	var judged []row
	for _, rw := range rows {
		if rw.State == "pending" {
			if _, ok := owner[rw.Phone]; ok {
				continue
			}
		}
		judged = append(judged, rw)
	}
	f := judge(t, judged, recs, true)
	var claims []record
	for _, h := range hosts {
		claims = append(claims, h.Claims()...)
	}
	f.buckets = checkHostsBuckets(t, recs, claims, lim)
	f.capBreaches = checkCaps(t, recs, dailyCap)
	if skipped == 0 {
		t.Errorf("no row was skipped as another host's: the hosts did not share one list")
	}
	report(t, "two-hosts", f, fmt.Sprintf("skipped_elsewhere=%d kills=%d mid_campaign=%d runs=%d+%d seed=%d elapsed=%v",
		skipped, killed, midCampaign, state[0].runs, state[1].runs, seed, elapsed.Round(time.Millisecond)))
}

// checkHostsBuckets judges each number's bucket from the server's record
// when two hosts claim its tokens: Redis's clock decides, and each host
// stamps its claims with its own clock before asking, so the claims'
// times are not the ones to hold the bucket to (checkBuckets does, for
// one host). A window of requests at the server may exceed the bucket by
// one token plus what the spread of claim-to-server delays of that number
// can bunch together. A host's claims are matched to requests by callback
// data and number: both hosts' rows of one line share callback data.
func checkHostsBuckets(t *testing.T, recs, claims []record, lim limit) buckets {
	t.Helper()
	type key struct{ callback, number string }
	queue := map[key][]record{}
	for _, c := range claims {
		k := key{c.CallbackData, c.PhoneNumberID}
		queue[k] = append(queue[k], c)
	}
	arrivals := map[string][]time.Time{}
	lo, hi := map[string]time.Duration{}, map[string]time.Duration{}
	for _, r := range recs {
		k := key{r.CallbackData, r.PhoneNumberID}
		q := queue[k]
		if len(q) == 0 {
			t.Errorf("request to %s (%s) from %s at %s: no host claimed a token on that number for it", r.To, r.CallbackData,
				r.PhoneNumberID, r.At.Format("15:04:05.000"))
			continue
		}
		queue[k] = q[1:]
		d := r.At.Sub(q[0].At)
		if _, ok := lo[r.PhoneNumberID]; !ok {
			lo[r.PhoneNumberID], hi[r.PhoneNumberID] = d, d
		}
		lo[r.PhoneNumberID], hi[r.PhoneNumberID] = min(lo[r.PhoneNumberID], d), max(hi[r.PhoneNumberID], d)
		arrivals[r.PhoneNumberID] = append(arrivals[r.PhoneNumberID], r.At)
	}
	var b buckets
	for id, ts := range arrivals {
		slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
		worst := overdraw(ts, lim)
		slack := 1 + lim.rate*(hi[id]-lo[id]).Seconds()
		b.server = max(b.server, worst)
		b.unexplained = max(b.unexplained, worst-slack+1)
		if worst > slack {
			t.Errorf("phone number id %s: bucket (rate %g/s, burst %d) overdrawn by %.2f tokens at the server, more than the %.2f its claim delays explain",
				id, lim.rate, lim.burst, worst, slack)
		}
	}
	return b
}
