//go:build torture

package torture

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/testproc"
)

// TestCrashTorture kills `campaign run` with SIGKILL at seeded random
// moments, running the same command again each time until it completes,
// then judges from the server's record: nobody accepted twice, every
// recipient not accepted is failed or unknown with a reason, and wasend's
// counts equal the server's (sent ⊆ accepted; accepted but not sent is
// unknown).
func TestCrashTorture(t *testing.T) {
	var (
		n     = size(400, 2000)
		kills = size(5, 20)
		lim   = limit{rate: 25, burst: 5}
	)
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	// Slow answers keep requests in flight at the kills; drops and server
	// errors add unknown rows and retries.
	w := newWorld(t, "--throughput", "-1", "--pair-interval", "-1s", "--seed", fmt.Sprint(seed),
		"--slow", "0.2", "--slow-delay", "300ms", "--drop", "0.02", "--server-error", "0.02")
	w.setup(lim.rate, lim.burst, 100000, threeAccounts)
	csv := w.WriteCSV("crash.csv", 4915112340000, n)
	run := runArgs(csv)

	start := time.Now()
	killed, midCampaign, runs := 0, 0, 0
	completed := false
	for killed < kills && !completed {
		sentBefore := testproc.States(w.Rows())["sent"]
		p := w.Start(run...)
		runs++
		// Most kills land while sending: a moment after this run recorded
		// its first send, however long its start took (on a loaded
		// machine, longer than any fixed delay); one in five at a moment
		// from its start, in start-up or import as it happens.
		delay := time.Duration(20+rng.IntN(600)) * time.Millisecond
		what := fmt.Sprintf("%v after its start", delay)
		if rng.IntN(5) != 0 {
			delay = time.Duration(rng.IntN(300)) * time.Millisecond
			what = fmt.Sprintf("%v after its first send", delay)
			sending(w, p, sentBefore)
		}
		select {
		case <-p.Done():
		case <-time.After(delay):
			p.Signal(t, syscall.SIGKILL)
		}
		r := p.Wait(t)
		checkOutput(t, fmt.Sprintf("run %d", runs), r)
		if r.Signal != syscall.SIGKILL {
			if r.Code != 0 {
				t.Fatalf("run %d: %s", runs, r)
			}
			completed = true
			t.Logf("run %d completed before its kill %s", runs, what)
			break
		}
		killed++
		got := testproc.States(w.Rows())
		if got["sent"] > 0 && got["pending"]+got["sending"] > 0 {
			midCampaign++
		}
		t.Logf("kill %d %s: rows %v", killed, what, got)
		w.CheckCounts(fmt.Sprintf("kill %d", killed))
	}
	if midCampaign == 0 {
		t.Fatal("no kill landed while the campaign was under way; the test proved nothing")
	}
	for !completed {
		r := w.Run(run...)
		runs++
		checkOutput(t, fmt.Sprintf("run %d", runs), r)
		if r.Code != 0 {
			t.Fatalf("run %d after the kills: %s", runs, r)
		}
		completed = strings.Contains(r.Stdout, "finished")
	}
	elapsed := time.Since(start)

	recs := w.api.Records(t)
	rows := w.Rows()
	if len(rows) != n {
		t.Fatalf("campaign holds %d recipients, want %d", len(rows), n)
	}
	f := judge(t, rows, recs, false)
	f.buckets = checkBuckets(t, recs, w.Claims(), lim)
	if f.sent+f.failed+f.unknown != n {
		t.Errorf("sent %d + failed %d + unknown %d ≠ %d recipients", f.sent, f.failed, f.unknown, n)
	}

	w.CheckCounts("the last run")

	// One more run of the same command finds nothing left to send.
	r := w.OK(run...)
	if !strings.Contains(r.Stdout, "already finished") {
		t.Errorf("run after the end: want \"already finished\"\n%s", r)
	}
	if got := len(w.api.Records(t)); got != len(recs) {
		t.Errorf("run after the end made %d more requests", got-len(recs))
	}
	report(t, "crash", f, fmt.Sprintf("kills=%d mid_campaign=%d runs=%d seed=%d elapsed=%v",
		killed, midCampaign, runs, seed, elapsed.Round(time.Millisecond)))
}

// sending waits until p's run has recorded a send (more rows sent than
// before), or has ended.
func sending(w *world, p *testproc.Proc, before int) {
	for testproc.States(w.Rows())["sent"] <= before {
		select {
		case <-p.Done():
			return
		case <-time.After(w.Poll):
		}
	}
}
