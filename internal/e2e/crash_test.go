package e2e

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/testproc"
)

var seedFlag = flag.Uint64("e2e.seed", 0, "seed of the kill moments and sandbox faults (0: from the clock)")

// testSeed returns the seed of a randomised test, logged so a failure can
// be replayed with -e2e.seed.
func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -e2e.seed=%d)", seed, seed)
	return seed
}

// TestCrashResume kills `campaign run` with SIGKILL at random moments and
// runs the same command again each time, then checks against the server's
// record that nobody was messaged twice and that wasend's account of every
// recipient is true: sent only if accepted, and unknown whenever a request
// may have been accepted without wasend hearing of it.
func TestCrashResume(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	w := newWorld(t, sandbox.Options{
		PairInterval: -1,
		Faults: sandbox.Faults{
			Seed: int64(seed), Slow: 0.3, SlowDelay: 300 * time.Millisecond, Drop: 0.02,
		},
	})
	for _, tier := range []string{"new", "warm", "active"} {
		w.OK("tier", "set", tier, "--rate", "40", "--burst", "5", "--daily-cap", "100000")
	}
	w.addAccounts(
		account{"fresh", "100000000000001", "new"},
		account{"warming", "100000000000002", "warm"},
		account{"main", "100000000000003", "active"},
	)
	const n = 400
	csv := w.WriteCSV("crash.csv", 4915112340000, n)
	run := []string{"campaign", "run", csv, "--template", "spring_sale", "--lang", "en_US", "--params", "name"}

	midCampaign := 0
	for kill := range 5 {
		p := w.Start(run...)
		time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
		p.Signal(t, syscall.SIGKILL)
		r := p.Wait(t)
		got := testproc.States(w.Rows())
		t.Logf("kill %d: %v, rows %v", kill+1, r.Signal, got)
		if r.Signal != syscall.SIGKILL {
			t.Errorf("kill %d: the run had already ended: %s", kill+1, r)
			continue
		}
		if got["sent"] > 0 && got["pending"]+got["sending"] > 0 {
			midCampaign++
		}
		w.CheckCounts(fmt.Sprintf("kill %d", kill+1))
	}
	if midCampaign == 0 {
		t.Fatal("no kill landed while the campaign was under way; the test proved nothing")
	}

	r := w.OK(run...)
	if !strings.Contains(r.Stdout, "finished") {
		t.Errorf("final run: want a finished summary\n%s", r)
	}
	if c := w.campaigns(); len(c) != 1 || c[0].State != "finished" || c[0].Total != n || c[0].Skipped != 0 {
		t.Errorf("after the final run: campaigns %+v, want one finished with all %d recipients imported", c, n)
	}
	recs := w.api.Records()
	rows := w.Rows()
	if len(rows) != n {
		t.Fatalf("campaign holds %d recipients, want %d (all of %s)", len(rows), n, csv)
	}
	t.Logf("final rows %v; server got %d requests, accepted %d recipients", testproc.States(rows), len(recs), len(testproc.Accepted(recs)))
	checkNoDuplicates(t, recs)
	checkAgainstServer(t, rows, recs, false)
	// A token paid for every request; a token whose request never left
	// was taken by a process killed in between, and its row is unknown.
	claims := w.Claims()
	_, unsent := matchClaims(t, recs, claims)
	state := map[string]string{}
	for _, r := range rows {
		state[dispatchID(r)] = r.State
	}
	for _, c := range unsent {
		if state[c.CallbackData] != "unknown" {
			t.Errorf("%s: claimed at %s, never reached the server, and is %s", c.CallbackData, c.At.Format("15:04:05.000"), state[c.CallbackData])
		}
	}
	t.Logf("%d claims never reached the server", len(unsent))
	// The buckets live in the database: a restart grants no fresh burst.
	for _, pnid := range []string{"100000000000001", "100000000000002", "100000000000003"} {
		var taken []time.Time
		for _, c := range claims {
			if c.PhoneNumberID == pnid {
				taken = append(taken, c.At)
			}
		}
		checkRate(t, "claims of "+pnid, sortedTimes(taken), 40, 5, 0)
	}

	w.CheckCounts("the last run")

	// One more run of the same command finds nothing left to send.
	r = w.OK(run...)
	if !strings.Contains(r.Stdout, "already finished") {
		t.Errorf("run after the end: want \"already finished\"\n%s", r)
	}
	if got := len(w.api.Records()); got != len(recs) {
		t.Errorf("run after the end made %d more requests", got-len(recs))
	}
}
